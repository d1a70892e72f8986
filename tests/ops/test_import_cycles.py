"""No two modules of `vigil` import each other, however indirectly: the import graph has no cycle.

Every import statement counts, those under `if TYPE_CHECKING:` too (a cycle there still means two modules that
cannot be understood, or moved, one without the other). import-linter's layer contracts only see imports across
packages; this sees every module.
"""

from __future__ import annotations

import itertools

import grimp

PACKAGE = "vigil"


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Each set of modules that reach one another through imports (a strongly connected component of more than
    one module), as one cycle through it, in import order and closed (the first module again at the end)."""
    successors = {module: sorted(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    return [_a_cycle(component, successors) for component in _components(successors) if len(component) > 1]


def _components(successors: dict[str, list[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components, iterative (a deep import chain must not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(successors):
        if root in index:
            continue
        work = [(root, iter(successors[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors.get(child, []))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                found.append(component)
    return found


def _a_cycle(component: set[str], successors: dict[str, list[str]]) -> list[str]:
    """The shortest way from the component's first module back to itself (breadth first, inside the component)."""
    start = min(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for module in frontier:
            for child in successors[module]:
                if child == start:
                    path = [module]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child in component and child not in came_from:
                    came_from[child] = module
                    following.append(child)
        frontier = following
    raise AssertionError(f"{sorted(component)} is not strongly connected")


def _described(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    steps = []
    for importer, imported in itertools.pairwise(cycle):
        lines = sorted(
            {detail["line_number"] for detail in graph.get_import_details(importer=importer, imported=imported)}
        )
        steps.append(f"  {importer} imports {imported} (line {', '.join(map(str, lines)) or '?'})")
    return "\n".join(steps)


def test_no_module_of_vigil_imports_itself_back() -> None:
    graph = grimp.build_graph(PACKAGE, exclude_type_checking_imports=False, cache_dir=None)
    assert len(graph.modules) > 100  # the whole package was read
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n\n".join(_described(graph, cycle) for cycle in cycles)


def test_a_cycle_is_found_and_shown_in_import_order() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"), ("p.d", "p.e")]:
        graph.add_import(importer=importer, imported=imported, line_number=1, line_contents="import")
    graph.add_module("p.alone")
    assert import_cycles(graph) == [["p.a", "p.b", "p.c", "p.a"]]
