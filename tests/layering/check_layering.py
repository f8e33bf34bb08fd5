#!/usr/bin/env python3
"""Checks that every #include "..." under src/ follows the layering rules.

The rules (rules.txt beside this script) say which modules each module may
use; a module also uses what those may use, and always itself. A file belongs
to the longest module that names it: a folder under src/ ("node") or a file
stem ("spec/scheduler_yaml" owns spec/scheduler_yaml.h and .cc). Test files
(*_test.cc, *_benchmark.cc, anything under a testing/ folder) may also use
what their module's "(tests)" rule adds. A "!module" in a rule forbids a
module the rule would otherwise allow through another ("controlplane: store
!net": the domain reaches the store, which speaks HTTP to etcd, but never
includes an HTTP type itself).

Prints each include a rule forbids as file:line and exits 1; exits 0 when the
layering holds. docs/architecture.md ("Layers") explains the rules.
"""
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
RULES = HERE / "rules.txt"
SRC = HERE.parent.parent / "src"

RULE_LINE = re.compile(r"^(?P<module>[\w/]+)(?P<tests> \(tests\))?:(?P<uses>[\w/! ]*)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*"(?P<path>[^"]+)"')


def read_rules(path):
    """{module: [modules it may use]}, the same for its tests' extras, and {module: {modules it never includes}}."""
    uses, test_uses, never = {}, {}, {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = RULE_LINE.match(line)
        if not match:
            sys.exit(f"{path}:{number}: cannot read '{line}'; write 'module: used modules' or 'module (tests): ...'")
        table = test_uses if match["tests"] else uses
        if match["module"] in table:
            sys.exit(f"{path}:{number}: a second rule for {match['module']}{match['tests'] or ''}")
        words = match["uses"].split()
        table[match["module"]] = [w for w in words if not w.startswith("!")]
        if not match["tests"]:
            never[match["module"]] = {w[1:] for w in words if w.startswith("!")}
    for table in (uses, test_uses, never):
        for module, used in table.items():
            for name in [module, *used]:
                if name not in uses:
                    sys.exit(f"{path}: '{name}' has no rule of its own ('{name}: ...')")
    return uses, test_uses, never


def closure(uses):
    """{module: every module it may use, directly or through others}; exits on a cycle."""
    done, active = {}, []

    def visit(module):
        if module in active:
            cycle = active[active.index(module):] + [module]
            sys.exit(f"{RULES}: the rules go round in a circle: {' -> '.join(cycle)}")
        if module not in done:
            active.append(module)
            below = set()
            for used in uses[module]:
                below |= {used} | visit(used)
            active.pop()
            done[module] = below
        return done[module]

    for module in uses:
        visit(module)
    return done


def module_of(path, modules):
    """The longest module naming `path` (relative to src/, '/'-separated), or None."""
    parts = path.split("/")
    stem = path.rsplit(".", 1)[0]
    candidates = [stem] + ["/".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)]
    return next((c for c in candidates if c in modules), None)


def is_test(path):
    return path.endswith(("_test.cc", "_benchmark.cc")) or "testing" in path.split("/")[:-1]


def main():
    uses, test_uses, never = read_rules(RULES)
    below = closure(uses)
    problems, owned, includes = [], set(), 0
    for file in sorted(p for p in SRC.rglob("*") if p.suffix in (".h", ".cc")):
        path = file.relative_to(SRC).as_posix()
        module = module_of(path, uses)
        if module is None:
            problems.append(f"src/{path}: no rule in {RULES.name} owns this file")
            continue
        owned.add(module)
        allowed = {module} | below[module]
        if is_test(path):
            for extra in test_uses.get(module, []):
                allowed |= {extra} | below[extra]
        allowed -= never[module]
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            includes += 1
            target = module_of(match["path"], uses)
            if target is None:
                problems.append(f"src/{path}:{number}: \"{match['path']}\" is in no module; headers from outside "
                                f"src/ are included with <>")
            elif target not in allowed:
                rule = f"{module}: {' '.join(uses[module] + ['!' + n for n in sorted(never[module])])}".strip()
                problems.append(f"src/{path}:{number}: {module} may not include \"{match['path']}\" "
                                f"(module {target}); the rule is '{rule}'")
    problems += [f"{RULES.name}: module {m} owns no file under src/" for m in sorted(set(uses) - owned)]
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} layering problem(s); the rules: {RULES}")
        return 1
    print(f"{includes} includes in src/ follow the {len(uses)} modules' rules in {RULES.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
