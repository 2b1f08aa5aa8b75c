"""Maximum-weight matching in a general graph (Edmonds' blossom method, primal-dual, O(n^3)).

Swiss pairing is a matching problem on a graph that is not bipartite, so greedy or bipartite
methods cannot guarantee "no rematch while one is avoidable". This module implements the
classic algorithm described by Galil ("Efficient algorithms for finding maximum matching in
graphs", ACM Computing Surveys 1986), in the formulation popularised by Joris van Rantwijk's
public-domain reference implementation. With integer weights every quantity stays an integer,
so results are exact and deterministic.

Vertices are ``0 .. n-1``; blossoms get numbers ``n .. 2n-1``. An edge ``k`` has endpoints
``2k`` and ``2k+1``; ``endpoint[p]`` is the vertex at endpoint ``p`` and ``p ^ 1`` the other
end. Dual variables of vertices are stored doubled so that slacks stay integral.

>>> max_weight_matching(4, [(0, 1, 6), (1, 2, 10), (2, 3, 6)])  # greedy would take 1-2
[1, 0, 3, 2]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

__all__ = ["max_weight_matching"]

_FREE, _S, _T, _CRUMB = 0, 1, 2, 4


def max_weight_matching(n: int, edges: Sequence[tuple[int, int, int]]) -> list[int]:
    """A matching of maximum total weight: ``mate[v]`` is v's partner, or -1 if unmatched."""
    if not edges:
        return [-1] * n
    return _Solver(n, edges).solve()


class _Solver:
    def __init__(self, n: int, edges: Sequence[tuple[int, int, int]]) -> None:
        for i, j, _ in edges:
            if not (0 <= i < n and 0 <= j < n) or i == j:
                raise ValueError(f"bad edge ({i}, {j}) for {n} vertices")
        self.n = n
        self.edges = edges
        m = len(edges)
        self.endpoint = [edges[p // 2][p % 2] for p in range(2 * m)]
        self.neighbours: list[list[int]] = [[] for _ in range(n)]
        for k, (i, j, _) in enumerate(edges):
            self.neighbours[i].append(2 * k + 1)
            self.neighbours[j].append(2 * k)
        #: Remote endpoint of v's matched edge, or -1.
        self.mate = [-1] * n
        #: Top-level blossom labels (_FREE, _S, _T; _CRUMB marks a trace in progress).
        self.label = [_FREE] * (2 * n)
        #: Remote endpoint of the edge through which a blossom (or T-vertex) got its label.
        self.labelend = [-1] * (2 * n)
        self.inblossom = list(range(n))
        self.parent = [-1] * (2 * n)
        #: Sub-blossoms of a blossom, starting at the base and going round.
        self.children: list[list[int]] = [[] for _ in range(2 * n)]
        self.base = list(range(n)) + [-1] * n
        #: endps[b][i]: endpoint of children[b][i] on the edge to children[b][i + 1].
        self.endps: list[list[int]] = [[] for _ in range(2 * n)]
        #: Least-slack edge from a free vertex to an S-vertex, or from an S-blossom to another.
        self.bestedge = [-1] * (2 * n)
        self.blossom_best: list[list[int] | None] = [None] * (2 * n)
        self.unused = list(range(n, 2 * n))
        top = max(0, *(w for _, _, w in edges))
        self.dual = [top] * n + [0] * n
        self.allowed = [False] * m
        self.queue: list[int] = []

    def slack(self, k: int) -> int:
        i, j, w = self.edges[k]
        return self.dual[i] + self.dual[j] - 2 * w

    def leaves(self, b: int) -> Iterator[int]:
        stack = [b]
        while stack:
            x = stack.pop()
            if x < self.n:
                yield x
            else:
                stack.extend(reversed(self.children[x]))

    def assign_label(self, w: int, t: int, p: int) -> None:
        while True:
            b = self.inblossom[w]
            self.label[w] = self.label[b] = t
            self.labelend[w] = self.labelend[b] = p
            self.bestedge[w] = self.bestedge[b] = -1
            if t == _S:
                self.queue.extend(self.leaves(b))
                return
            # A T-blossom's base is matched; its mate becomes an S-vertex.
            mp = self.mate[self.base[b]]
            w, t, p = self.endpoint[mp], _S, mp ^ 1

    def scan_blossom(self, v: int, w: int) -> int:
        """Trace back from v and w: the base of a new blossom, or -1 for an augmenting path."""
        path: list[int] = []
        base = -1
        while v != -1 or w != -1:
            b = self.inblossom[v]
            if self.label[b] & _CRUMB:
                base = self.base[b]
                break
            path.append(b)
            self.label[b] = _S | _CRUMB
            if self.labelend[b] == -1:
                v = -1
            else:
                v = self.endpoint[self.labelend[b]]
                v = self.endpoint[self.labelend[self.inblossom[v]]]
            if w != -1:
                v, w = w, v
        for b in path:
            self.label[b] = _S
        return base

    def add_blossom(self, base: int, k: int) -> None:
        v, w, _ = self.edges[k]
        bb, bv, bw = self.inblossom[base], self.inblossom[v], self.inblossom[w]
        b = self.unused.pop()
        self.base[b] = base
        self.parent[b] = -1
        self.parent[bb] = b
        path: list[int] = []
        endps: list[int] = []
        while bv != bb:
            self.parent[bv] = b
            path.append(bv)
            endps.append(self.labelend[bv])
            bv = self.inblossom[self.endpoint[self.labelend[bv]]]
        path.append(bb)
        path.reverse()
        endps.reverse()
        endps.append(2 * k)
        while bw != bb:
            self.parent[bw] = b
            path.append(bw)
            endps.append(self.labelend[bw] ^ 1)
            bw = self.inblossom[self.endpoint[self.labelend[bw]]]
        self.children[b], self.endps[b] = path, endps
        self.label[b] = _S
        self.labelend[b] = self.labelend[bb]
        self.dual[b] = 0
        for x in self.leaves(b):
            if self.label[self.inblossom[x]] == _T:
                self.queue.append(x)
            self.inblossom[x] = b
        best_to = [-1] * (2 * self.n)
        for sub in path:
            known = self.blossom_best[sub]
            if known is None:
                candidates = [p // 2 for x in self.leaves(sub) for p in self.neighbours[x]]
            else:
                candidates = known
            for e in candidates:
                i, j, _ = self.edges[e]
                if self.inblossom[j] == b:
                    i, j = j, i
                bj = self.inblossom[j]
                if (
                    bj != b
                    and self.label[bj] == _S
                    and (best_to[bj] == -1 or self.slack(e) < self.slack(best_to[bj]))
                ):
                    best_to[bj] = e
            self.blossom_best[sub] = None
            self.bestedge[sub] = -1
        best = [e for e in best_to if e != -1]
        self.blossom_best[b] = best
        self.bestedge[b] = min(best, key=self.slack, default=-1)

    def _walk(self, b: int, start: int) -> tuple[int, int, int]:
        """Index, step and endpoint trick to go round blossom b from child ``start`` to its base."""
        j = start
        if j & 1:
            return j - len(self.children[b]), 1, 0
        return j, -1, 1

    def expand_blossom(self, b: int, endstage: bool) -> None:
        for s in self.children[b]:
            self.parent[s] = -1
            if s < self.n:
                self.inblossom[s] = s
            elif endstage and self.dual[s] == 0:
                self.expand_blossom(s, endstage)
            else:
                for x in self.leaves(s):
                    self.inblossom[x] = s
        if not endstage and self.label[b] == _T:
            self._relabel_expanded_t(b)
        self.label[b] = self.labelend[b] = -1
        self.children[b], self.endps[b] = [], []
        self.base[b] = -1
        self.blossom_best[b] = None
        self.bestedge[b] = -1
        self.unused.append(b)

    def _relabel_expanded_t(self, b: int) -> None:
        """After expanding a T-blossom mid-stage, relabel its children along the even path."""
        children, endps, endpoint = self.children[b], self.endps[b], self.endpoint
        entry = self.inblossom[endpoint[self.labelend[b] ^ 1]]
        j, step, trick = self._walk(b, children.index(entry))
        p = self.labelend[b]
        while j != 0:
            self.label[endpoint[p ^ 1]] = _FREE
            self.label[endpoint[endps[j - trick] ^ trick ^ 1]] = _FREE
            self.assign_label(endpoint[p ^ 1], _T, p)
            self.allowed[endps[j - trick] // 2] = True
            j += step
            p = endps[j - trick] ^ trick
            self.allowed[p // 2] = True
            j += step
        bv = children[j]
        self.label[endpoint[p ^ 1]] = self.label[bv] = _T
        self.labelend[endpoint[p ^ 1]] = self.labelend[bv] = p
        self.bestedge[bv] = -1
        j += step
        while children[j] != entry:
            bv = children[j]
            if self.label[bv] != _S:
                reached = next((x for x in self.leaves(bv) if self.label[x] != _FREE), None)
                if reached is not None:
                    self.label[reached] = _FREE
                    self.label[endpoint[self.mate[self.base[bv]]]] = _FREE
                    self.assign_label(reached, _T, self.labelend[reached])
            j += step

    def augment_blossom(self, b: int, v: int) -> None:
        """Swap matched and unmatched edges inside b so that v becomes its base."""
        t = v
        while self.parent[t] != b:
            t = self.parent[t]
        if t >= self.n:
            self.augment_blossom(t, v)
        i = self.children[b].index(t)
        j, step, trick = self._walk(b, i)
        children, endps, endpoint = self.children[b], self.endps[b], self.endpoint
        while j != 0:
            j += step
            t = children[j]
            p = endps[j - trick] ^ trick
            if t >= self.n:
                self.augment_blossom(t, endpoint[p])
            j += step
            t = children[j]
            if t >= self.n:
                self.augment_blossom(t, endpoint[p ^ 1])
            self.mate[endpoint[p]] = p ^ 1
            self.mate[endpoint[p ^ 1]] = p
        self.children[b] = children[i:] + children[:i]
        self.endps[b] = endps[i:] + endps[:i]
        self.base[b] = self.base[self.children[b][0]]

    def augment_matching(self, k: int) -> None:
        v, w, _ = self.edges[k]
        for start, remote in ((v, 2 * k + 1), (w, 2 * k)):
            s, p = start, remote
            while True:
                bs = self.inblossom[s]
                if bs >= self.n:
                    self.augment_blossom(bs, s)
                self.mate[s] = p
                if self.labelend[bs] == -1:
                    break
                bt = self.inblossom[self.endpoint[self.labelend[bs]]]
                s = self.endpoint[self.labelend[bt]]
                j = self.endpoint[self.labelend[bt] ^ 1]
                if bt >= self.n:
                    self.augment_blossom(bt, j)
                self.mate[j] = self.labelend[bt]
                p = self.labelend[bt] ^ 1

    def scan(self, v: int) -> bool:
        """Grow the alternating forest from S-vertex v; True once the matching was augmented."""
        # The hot loop of the algorithm: attributes are bound to locals for speed. None of
        # these lists is replaced while a scan runs (only stage() replaces them).
        edges, dual, endpoint, inblossom = self.edges, self.dual, self.endpoint, self.inblossom
        label, allowed, bestedge = self.label, self.allowed, self.bestedge
        for p in self.neighbours[v]:
            k, w = p >> 1, endpoint[p]
            bw = inblossom[w]
            if inblossom[v] == bw:
                continue
            kslack = 0
            if not allowed[k]:
                i, j, wt = edges[k]
                kslack = dual[i] + dual[j] - 2 * wt
                allowed[k] = kslack <= 0
            if allowed[k]:
                if label[bw] == _FREE:
                    self.assign_label(w, _T, p ^ 1)
                elif label[bw] == _S:
                    base = self.scan_blossom(v, w)
                    if base < 0:
                        self.augment_matching(k)
                        return True
                    self.add_blossom(base, k)
                elif label[w] == _FREE:
                    label[w] = _T
                    self.labelend[w] = p ^ 1
            elif label[bw] == _S:
                b = inblossom[v]
                if bestedge[b] == -1 or kslack < self.slack(bestedge[b]):
                    bestedge[b] = k
            elif label[w] == _FREE and (bestedge[w] == -1 or kslack < self.slack(bestedge[w])):
                bestedge[w] = k
        return False

    def adjust_duals(self) -> bool:
        """Change the duals by the largest safe delta; False when the optimum is reached."""
        n = self.n
        kind, delta, edge, blossom = 1, min(self.dual[:n]), -1, -1
        for v in range(n):
            e = self.bestedge[v]
            if self.label[self.inblossom[v]] == _FREE and e != -1 and self.slack(e) < delta:
                kind, delta, edge = 2, self.slack(e), e
        for b in range(2 * n):
            e = self.bestedge[b]
            if (
                self.parent[b] == -1
                and self.label[b] == _S
                and e != -1
                and self.slack(e) // 2 < delta
            ):
                kind, delta, edge = 3, self.slack(e) // 2, e
        for b in range(n, 2 * n):
            top_t = self.base[b] >= 0 and self.parent[b] == -1 and self.label[b] == _T
            if top_t and self.dual[b] < delta:
                kind, delta, blossom = 4, self.dual[b], b
        for v in range(n):
            lab = self.label[self.inblossom[v]]
            if lab == _S:
                self.dual[v] -= delta
            elif lab == _T:
                self.dual[v] += delta
        for b in range(n, 2 * n):
            if self.base[b] >= 0 and self.parent[b] == -1:
                if self.label[b] == _S:
                    self.dual[b] += delta
                elif self.label[b] == _T:
                    self.dual[b] -= delta
        if kind == 1:
            return False
        if kind == 4:
            self.expand_blossom(blossom, False)
            return True
        self.allowed[edge] = True
        i, j, _ = self.edges[edge]
        if kind == 2 and self.label[self.inblossom[i]] == _FREE:
            i = j
        self.queue.append(i)
        return True

    def stage(self) -> bool:
        """Find one augmenting path and use it; False when none is worth taking."""
        n = self.n
        self.label = [_FREE] * (2 * n)
        self.bestedge = [-1] * (2 * n)
        self.blossom_best[n:] = [None] * n
        self.allowed = [False] * len(self.edges)
        self.queue = []
        for v in range(n):
            if self.mate[v] == -1 and self.label[self.inblossom[v]] == _FREE:
                self.assign_label(v, _S, -1)
        while True:
            while self.queue:
                if self.scan(self.queue.pop()):
                    return True
            if not self.adjust_duals():
                return False

    def solve(self) -> list[int]:
        n = self.n
        for _ in range(n):
            if not self.stage():
                break
            for b in range(n, 2 * n):
                if (
                    self.parent[b] == -1
                    and self.base[b] >= 0
                    and self.label[b] == _S
                    and self.dual[b] == 0
                ):
                    self.expand_blossom(b, True)
        return [self.endpoint[p] if p >= 0 else -1 for p in self.mate]
