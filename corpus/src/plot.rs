//! The results plots: PNG line charts of executions to the bug, drawn with plotters.
//!
//! This module owns how every results plot looks (size, log axes, colours, markers, legend)
//! and where the font for its text comes from; its callers (the family plots of
//! `docs/RESULTS.md` in `src/main.rs`, and the `strategy_results` binary) only hand it numbers
//! and labels.
//!
//! plotters draws text here through its pure-Rust `ab_glyph` feature, which needs no system
//! font library at build time but also finds no font by itself: [`use_font`] reads a TrueType
//! file at run time, from `PCTVB_PLOT_FONT` or from [`FONT_CANDIDATES`], and registers it
//! once. Without a font there is no readable plot, so that is an error, never a silent skip.

use std::error::Error;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

/// The environment variable that names the font file to draw text with.
pub const FONT_ENV: &str = "PCTVB_PLOT_FONT";

/// Where the usual systems keep a sans-serif TrueType font, tried in order when
/// [`FONT_ENV`] is not set: DejaVu Sans on Debian/Ubuntu (`fonts-dejavu-core`), Fedora
/// (`dejavu-sans-fonts`), Arch and Alpine; Liberation Sans on Debian; Arial on macOS.
pub const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
];

/// One line of a chart: its legend name and its y values, one per x.
pub type Series = (String, Vec<f64>);

/// The size of every results plot, in pixels.
pub const SIZE: (u32, u32) = (960, 540);

/// The font file to use: `env` (the value of [`FONT_ENV`]) if set, else the first of
/// `candidates` that exists. The error says what was looked for and how to provide a font.
pub fn find_font(env: Option<OsString>, candidates: &[&str]) -> Result<PathBuf, String> {
    if let Some(path) = env.filter(|p| !p.is_empty()).map(PathBuf::from) {
        // An explicit choice that does not exist is a mistake to report, not to paper over
        // with some other font.
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!("{FONT_ENV} is set to {}, which is not a file", path.display()))
        };
    }
    candidates.iter().map(PathBuf::from).find(|p| p.is_file()).ok_or_else(|| {
        format!(
            "no font to draw the plots' text with: {FONT_ENV} is not set and none of these \
             exists: {}. Set {FONT_ENV} to a TrueType font file (.ttf), or install one \
             (Debian/Ubuntu: apt-get install fonts-dejavu-core; Fedora: dnf install \
             dejavu-sans-fonts)",
            candidates.join(", ")
        )
    })
}

/// Finds the font (see [`find_font`]) and registers it as plotters' sans-serif, once per
/// process; later calls return the first call's result. Callers that run for minutes before
/// they plot call this first, to fail before the work rather than after it.
pub fn use_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let path = find_font(std::env::var_os(FONT_ENV), FONT_CANDIDATES)?;
            let bytes = std::fs::read(&path)
                .map_err(|e| format!("cannot read the font {}: {e}", path.display()))?;
            // register_font keeps a &'static [u8]: the bytes live for the rest of this
            // (short, one-shot) process, registered once.
            let bytes: &'static [u8] = Vec::leak(bytes);
            register_font("sans-serif", FontStyle::Normal, bytes).map_err(|_| {
                format!("{} is not a TrueType/OpenType font ({FONT_ENV})", path.display())
            })
        })
        .clone()
}

/// Line colours: matplotlib's ten, then four darker ones. The corpus plots have a line per
/// column of `docs/RESULTS.md` (13 now), and a colour used twice would make two lines one.
const COLORS: [RGBColor; 14] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x00, 0x00, 0x80),
    RGBColor(0x99, 0x77, 0x00),
    RGBColor(0x00, 0x66, 0x66),
];

/// Powers of ten from 1 up to the first at or above `max`.
fn decades(max: f64) -> Vec<f64> {
    let mut v = vec![1.0];
    while v[v.len() - 1] < max {
        v.push(v[v.len() - 1] * 10.0);
    }
    v
}

/// Draws a line chart of mean executions to the bug into the PNG file `path` of `size`
/// pixels: `x_label` against x, both axes on a log scale (the parameters and the counts each
/// span decades), one line with a marker per point for each `(name, ys)` of `series` (`ys`
/// matches `xs`), and the legend to the right of the plot so that it never covers a line.
/// Means are at least one execution; a smaller value is drawn at 1 (a log axis has no 0).
pub fn line_chart(
    path: &Path,
    size: (u32, u32),
    title: &str,
    x_label: &str,
    xs: &[f64],
    series: &[Series],
) -> Result<(), String> {
    use_font()?;
    draw(path, size, title, x_label, xs, series)
        .map_err(|e| format!("cannot draw {}: {e}", path.display()))
}

type Root<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// Where lines overlap, the marker tells the tool family: pctvb's strategies circles,
/// shuttle's schedulers triangles (on dashed lines), loom squares. `at` is in pixels.
fn marker(
    root: &Root,
    name: &str,
    at: (i32, i32),
    style: ShapeStyle,
) -> Result<(), Box<dyn Error>> {
    let style = style.filled();
    if name.starts_with("shuttle") {
        root.draw(&TriangleMarker::new(at, 6, style))?;
    } else if name.starts_with("loom") {
        root.draw(&Rectangle::new([(at.0 - 4, at.1 - 4), (at.0 + 4, at.1 + 4)], style))?;
    } else {
        root.draw(&Circle::new(at, 4, style))?;
    }
    Ok(())
}

fn draw(
    path: &Path,
    size: (u32, u32),
    title: &str,
    x_label: &str,
    xs: &[f64],
    series: &[Series],
) -> Result<(), Box<dyn Error>> {
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    // Room above the title: ab_glyph draws glyphs a little above the text's nominal box.
    let area = root.margin(8, 0, 0, 0).titled(title, ("sans-serif", 24))?;

    // The legend's column: wide enough for the longest name, beside a line sample.
    let legend_font: TextStyle = ("sans-serif", 16).into();
    let mut name_width = 0;
    for (name, _) in series {
        name_width = name_width.max(root.estimate_text_size(name, &legend_font)?.0);
    }
    let (plot, legend) = area.split_horizontally(size.0 as i32 - name_width as i32 - 60);

    // x: ticks exactly at the measured parameters, with a little room left and right;
    // y: ticks at the decades that hold the data, from a little below 1 so that a series of
    // ones stays visible above the x axis.
    let (x0, x1) = xs.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let y_max = series.iter().flat_map(|(_, ys)| ys.iter().copied()).fold(1.0, f64::max);
    let y_ticks = decades(y_max * 1.2);
    let y_top = y_ticks[y_ticks.len() - 1];
    let mut chart = ChartBuilder::on(&plot)
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (x0 / 1.2..x1 * 1.2).log_scale().with_key_points(xs.to_vec()),
            (0.7..y_top).log_scale().with_key_points(y_ticks),
        )?;
    chart
        .configure_mesh()
        .x_desc(format!("{x_label} (log scale)"))
        .y_desc("mean executions to bug (log scale)")
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 15))
        .x_label_formatter(&|x| format!("{x}"))
        .y_label_formatter(&|y| format!("{y}"))
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .draw()?;

    let (legend_x, legend_y) = legend.get_base_pixel();
    for (i, (name, ys)) in series.iter().enumerate() {
        let style = COLORS[i % COLORS.len()].stroke_width(2);
        let points: Vec<(f64, f64)> = xs.iter().zip(ys).map(|(&x, &y)| (x, y.max(1.0))).collect();
        // Dashed shuttle lines, as in the plots before these: the other tool at a glance.
        let dashed = name.starts_with("shuttle");
        if dashed {
            chart.draw_series(DashedLineSeries::new(points.clone(), 8, 5, style))?;
        } else {
            chart.draw_series(LineSeries::new(points.clone(), style))?;
        }
        for p in &points {
            marker(&root, name, chart.backend_coord(p), style)?;
        }

        // The legend entry: a line sample with a marker, then the name.
        let y = 60 + 26 * i as i32;
        let sample = [(10, y), (40, y)];
        if dashed {
            legend.draw(&DashedPathElement::new(sample, 6, 4, style))?;
        } else {
            legend.draw(&PathElement::new(sample, style))?;
        }
        marker(&root, name, (legend_x + 25, legend_y + y), style)?;
        legend.draw(&Text::new(name.as_str(), (48, y - 9), legend_font.clone()))?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_font_names_what_was_tried_and_what_to_do() {
        let e = find_font(None, &["/nonexistent/a.ttf", "/nonexistent/b.ttf"]).unwrap_err();
        for part in [FONT_ENV, "/nonexistent/a.ttf", "/nonexistent/b.ttf", "fonts-dejavu-core"] {
            assert!(e.contains(part), "{part} not in: {e}");
        }
        let e = find_font(Some("/nonexistent/c.ttf".into()), FONT_CANDIDATES).unwrap_err();
        assert!(e.contains(FONT_ENV) && e.contains("/nonexistent/c.ttf"), "{e}");
    }

    #[test]
    fn the_variable_wins_and_an_empty_one_counts_as_unset() {
        // Any existing file will do for the lookup, which does not parse fonts.
        let this = concat!(env!("CARGO_MANIFEST_DIR"), "/src/plot.rs");
        let lib = concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs");
        assert_eq!(find_font(Some(this.into()), &[lib]).unwrap(), Path::new(this));
        assert_eq!(find_font(Some("".into()), &["/nonexistent", lib]).unwrap(), Path::new(lib));
    }

    #[test]
    fn draws_a_png_of_the_requested_size() {
        let path = std::env::temp_dir().join(format!("pctvb-plot-{}.png", std::process::id()));
        let series = vec![
            ("random".to_string(), vec![3.0, 40.0, 900.0]),
            ("shuttle random".to_string(), vec![2.0, 20.0, 20_000.0]),
        ];
        line_chart(&path, (400, 300), "a test", "threads n", &[2.0, 10.0, 100.0], &series)
            .unwrap_or_else(|e| panic!("{e} (this test needs a font, see {FONT_ENV})"));
        let png = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        // The PNG signature, then the IHDR chunk: length, "IHDR", width and height.
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        let be = |i: usize| u32::from_be_bytes(png[i..i + 4].try_into().unwrap());
        assert_eq!((be(16), be(20)), (400, 300));
    }
}
