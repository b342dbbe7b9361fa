#!/usr/bin/env python3
"""Every command make test calls comes from a package make deps installs.

Reads the Makefile, .ci/run and the host-side scripts of tests/ and
deploy/; each word that names an executable on a Debian root's PATH (not a
shell builtin) is a command the run may call. The file it resolves to is
mapped to its package with dpkg -S; the package must be one of the
Makefile's DEB_PKGS (make print-deb-pkgs) or one every Debian has (Priority
required, or Essential). Python modules the scripts import are checked the
same way, through the file Debian's python3 loads.

A word is a candidate command, not proof of a call: a word that names a
command but is none here is listed in NOT_COMMANDS, with why.

Then the check is tried on itself: with one package the scripts use taken
out of the list, it must fail and name that package.
Ends with "N passed, N failed"."""
import os
import re
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# a Debian root's PATH: nothing from /usr/local or a user's toolchain
PATH = '/usr/sbin:/usr/bin:/sbin:/bin'
# the package the tree itself builds (make deb)
SELF = 'bloomtap'
# run elsewhere, whose commands are not this machine's: the guests'
GUEST = {'tests/ship/systemd_guest.sh', 'tests/kernels/init', 'tests/kernels/guest.sh'}
# words that name a command on a Debian root but are never called as one
NOT_COMMANDS = {
    'run': 'a subcommand of bloomtap', 'watch': 'a subcommand of bloomtap',
    'trace': 'a subcommand of bloomtap', 'status': 'a subcommand of bloomtap',
    'replay': 'a subcommand of bloomtap', 'drops': 'a subcommand of bloomtap',
    # English words and variables in strings and comments; none of them
    # stands where a command does in these files
    'as': 'a word', 'file': 'a word', 'top': 'a word', 'w': 'a variable',
    'look': 'a word', 'write': 'a word', 'less': 'a word', 'ex': 'a word',
    'zip': "python's builtin", 'ts': 'a variable', 'route': 'a word',
    'parallel': "a field of the fleet's options, in a mutant's text",
    'errno': "C's, in a mutant's text", 'view': 'a word',
    # python's builtin; xdg-utils's /usr/bin/open is on a root where apt
    # brought its Recommends (a fresh root's make deps does), not here
    'open': "python's builtin",
    'POST': 'an HTTP method', 'GET': 'an HTTP method',
    'poweroff': "the guest's (a heredoc of rootfs.sh)",
    # on a fresh root, Debian's npm brings node-tap (/usr/bin/tap) and
    # something brings daemon (/usr/bin/daemon): here they are the tap
    # suite's name and a word (the first fresh-root run named them)
    'tap': 'a suite and a mode of bloomtap', 'daemon': 'a word',
}
WORD = re.compile(r'(?<![\w$./-])([A-Za-z][A-Za-z0-9_+-]*(?:\.[A-Za-z0-9]+)?)(?![\w/])')
IMPORT = re.compile(r'^\s*(?:import|from)\s+([A-Za-z_]\w*)', re.M)


def sources():
    # every script under tests/ (its folders as well) and deploy/
    files = ['Makefile', '.ci/run']
    for top in ('tests', 'deploy'):
        for d, subdirs, names in sorted(os.walk(os.path.join(TOP, top))):
            subdirs[:] = sorted(x for x in subdirs if x != 'data')
            rel = os.path.relpath(d, TOP)
            for f in sorted(names):
                p = os.path.join(rel, f)
                if f.endswith(('.sh', '.py')) or (rel == 'tests/kernels' and '.' not in f):
                    if p not in GUEST:
                        files.append(p)
    return files


def words(text):
    # whole-line comments say what a line does, not what it calls
    text = '\n'.join(line for line in text.splitlines() if not line.lstrip().startswith('#'))
    return set(WORD.findall(text))


def builtins():
    out = subprocess.run(['bash', '-c', 'compgen -b; compgen -k'], capture_output=True,
                         text=True).stdout
    return set(out.split())


def candidates(path):
    """The names dpkg may know path by: itself, the file a link of it
    names, and each under merged /usr's other spelling."""
    tries = [path, os.path.realpath(path)]
    for p in list(tries):
        tries.append(p[4:] if p.startswith('/usr/') else '/usr' + p)
    return tries


def owners(paths):
    """{path: the package that ships it, or None}, from one dpkg -S (a
    call reads every package's file list: one per path took a minute)."""
    names = sorted({c for p in paths for c in candidates(p)})
    out = subprocess.run(['dpkg', '-S'] + names, capture_output=True, text=True).stdout
    pkg = {}
    for line in out.splitlines():
        if line.startswith('diversion') or ': ' not in line:
            continue
        pkgs, name = line.split(': ', 1)
        pkg.setdefault(name.strip(), pkgs.split(',')[0].split(':')[0].strip())
    return {p: next((pkg[c] for c in candidates(p) if c in pkg), None) for p in paths}


def base_packages():
    out = subprocess.run(['dpkg-query', '-W', '-f', '${Package} ${Priority} ${Essential}\n'],
                         capture_output=True, text=True).stdout
    return {f[0] for f in (l.split() for l in out.splitlines())
            if len(f) >= 2 and (f[1] == 'required' or 'yes' in f[2:])}


def listed():
    """DEB_PKGS and what apt installs with them (Depends, Pre-Depends)."""
    out = subprocess.run(['make', '-s', '-C', TOP, 'print-deb-pkgs'], capture_output=True,
                         text=True, check=True).stdout
    pkgs = set(out.split())
    return pkgs, closure(pkgs)


def closure(pkgs):
    out = subprocess.run(['apt-cache', 'depends', '--recurse', '--no-recommends',
                          '--no-suggests', '--no-conflicts', '--no-breaks', '--no-replaces',
                          '--no-enhances'] + sorted(pkgs), capture_output=True, text=True).stdout
    return {l.strip().lstrip('|').split(':')[-1].strip().strip('<>')
            for l in out.splitlines()} | pkgs


def uses():
    """{package: [(file, command or module, path)]} of everything called."""
    found, calls, modules, skip = {}, [], {}, builtins() | set(NOT_COMMANDS)
    python3 = shutil.which('python3', path=PATH)
    for f in sources():
        text = open(os.path.join(TOP, f), errors='replace').read()
        names = [(w, shutil.which(w, path=PATH)) for w in sorted(words(text) - skip)]
        if f.endswith('.py') or 'python3' in text:
            for m in sorted(set(IMPORT.findall(text))):
                if m not in modules:
                    r = subprocess.run([python3, '-c', 'import %s as m; print(getattr(m, '
                                        '"__file__", "") or "")' % m], capture_output=True, text=True)
                    modules[m] = r.stdout.strip() if r.returncode == 0 else ''
                if modules[m]:
                    names.append(('import ' + m, modules[m]))
        calls += [(f, name, path) for name, path in names if path]
    pkg = owners({path for _, _, path in calls})
    for f, name, path in calls:
        # the tree's own commands, where its package is installed, are no dependency
        if pkg[path] and pkg[path] != SELF:
            found.setdefault(pkg[path], []).append((f, name, path))
    return found


def check(found, have, base, label, mark='FAIL'):
    bad = {p: u for p, u in found.items() if p not in have and p not in base}
    for p, u in sorted(bad.items()):
        where = ', '.join(sorted({'%s (%s)' % (f, n) for f, n, _ in u})[:4])
        print('  %-4s  %s: %s calls what package %s ships; make deps does not install it'
              % (mark, label, where, p))
    return bad


def main():
    passed = failed = 0
    pkgs, have = listed()
    base = base_packages()
    found = uses()
    print('  %d packages give the commands and modules the run calls:' % len(found))
    print('        ' + ' '.join(sorted(found)))
    bad = check(found, have, base, 'make deps')
    if bad:
        failed += 1
    else:
        passed += 1
        print('  ok    every command and module the run calls is installed by make deps '
              'or in every Debian')
    # the check tried on itself: tshark taken out of the list
    probe = 'tshark'
    if probe in found and probe in pkgs:
        bad = check(found, closure(pkgs - {probe}), base, 'without ' + probe, '--')
        if probe in bad:
            passed += 1
            print('  ok    with %s taken out of the list, the check fails and names it' % probe)
        else:
            failed += 1
            print('  FAIL  with %s taken out of the list, the check did not name it' % probe)
    else:
        failed += 1
        print('  FAIL  the self-check\'s package %s is not found among the calls' % probe)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
