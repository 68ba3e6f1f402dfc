#!/usr/bin/env python3
"""The fewest preemptions SafeStack's bug needs (corpus/src/programs/sctbench.rs `safestack`).

Explores every interleaving of an abstract model of the port (the three worker threads, one
step per atomic operation or yield, sequentially consistent; the test body's spawns and joins
left out) with a 0-1 breadth-first search whose cost is the number of preemptions: a switch
away from a thread that could continue and did not just yield. A thread that yields waits, as
under pctvb, until another thread changes shared state (or no other thread can run). Prints
the cost and one failing schedule of that cost, step by step.
Usage: python3 scripts/safestack-min-preemptions.py   (a few seconds)
"""
import collections

THREADS = 3


def step(shared, local, tid):
    """Runs thread `tid`'s next operation: (shared, local, progress, yielded, failed, text)."""
    head, count, nxt, val = shared
    pc, it, head1, next1, elem, h = local
    nxt, val = list(nxt), list(val)
    progress = yielded = failed = False
    if pc == 'pop-count':
        text = f'load count = {count}'
        pc = 'pop-head' if count > 1 else 'outer-yield'
    elif pc == 'pop-head':
        head1, pc, text = head, 'pop-swap', f'load head = {head}'
    elif pc == 'pop-swap':
        next1 = nxt[head1]
        progress = next1 != -1
        nxt[head1] = -1
        text = f'swap next[{head1}] -> {next1}'
        pc = 'pop-cas' if next1 >= 0 else 'pop-yield'
    elif pc in ('pop-yield', 'outer-yield'):
        yielded, pc, text = True, 'pop-count', 'yield'
    elif pc == 'pop-cas':
        if head == head1:
            head, progress, pc = next1, True, 'pop-dec'
            text = f'CAS head {head1} -> {next1} ok'
        else:
            pc, text = 'pop-restore', f'CAS head {head1} -> {next1} fails (head = {head})'
    elif pc == 'pop-restore':
        progress = nxt[head1] != next1
        nxt[head1] = next1
        pc, text = 'pop-count', f'restore next[{head1}] = {next1}'
    elif pc == 'pop-dec':
        count -= 1
        progress, elem, pc = True, head1, 'store'
        text = f'count -= 1 -> {count} (holds slot {elem})'
    elif pc == 'store':
        progress = val[elem] != tid
        val[elem] = tid
        pc, text = 'check', f'value[{elem}] = {tid}'
    elif pc == 'check':
        text = f'load value[{elem}] = {val[elem]}'
        failed = val[elem] != tid
        pc = 'push-head'
    elif pc == 'push-head':
        h, pc, text = head, 'push-store', f'push: load head = {head}'
    elif pc == 'push-store':
        progress = nxt[elem] != h
        nxt[elem] = h
        pc, text = 'push-cas', f'push: next[{elem}] = {h}'
    elif pc == 'push-cas':
        if head == h:
            head, progress, pc = elem, True, 'push-inc'
            text = f'push: CAS head {h} -> {elem} ok'
        else:
            text = f'push: CAS head {h} -> {elem} fails (head = {head})'
            h, pc = head, 'push-store'
    elif pc == 'push-inc':
        count += 1
        progress, it = True, it + 1
        text = f'count += 1 -> {count}'
        pc = 'pop-count' if it < 2 else 'done'
    return ((head, count, tuple(nxt), tuple(val)), (pc, it, head1, next1, elem, h),
            progress, yielded, failed, text)


def search():
    shared = (0, 3, (1, 2, -1), (-1, -1, -1))
    local = ('pop-count', 0, -1, -1, -1, -1)
    start = (shared, (local,) * THREADS, frozenset(), None)
    cost, parent = {start: 0}, {}
    queue = collections.deque([start])
    while queue:
        state = queue.popleft()
        shared, locals_, spinning, current = state
        live = [t for t in range(THREADS) if locals_[t][0] != 'done']
        enabled = [t for t in live if t not in spinning] or live
        if not [t for t in live if t not in spinning]:
            spinning = frozenset()
        for t in enabled:
            c = 1 if current is not None and current != t and current in enabled else 0
            new_shared, new_local, progress, yielded, failed, text = step(shared, locals_[t], t)
            if failed:
                path, s = [(t, text, c)], state
                while s in parent:
                    s, tt, tx, cc = parent[s]
                    path.append((tt, tx, cc))
                return cost[state] + c, path[::-1]
            new_locals = list(locals_)
            new_locals[t] = new_local
            new_spinning = set() if progress else set(spinning)
            nxt_current = t
            if yielded and [u for u in live if u != t and u not in new_spinning]:
                new_spinning.add(t)
                nxt_current = None
            if new_local[0] == 'done':
                nxt_current = None
            nxt = (new_shared, tuple(new_locals), frozenset(new_spinning), nxt_current)
            d = cost[state] + c
            if nxt not in cost or cost[nxt] > d:
                cost[nxt], parent[nxt] = d, (state, t, text, c)
                (queue.append if c else queue.appendleft)(nxt)
    return None


preemptions, path = search()
print(f'fewest preemptions: {preemptions} ({len(path)} steps)')
for tid, text, preempted in path:
    print(f"{'preempt ' if preempted else '        '}thread {tid}: {text}")
