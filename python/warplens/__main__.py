"""`python -m warplens ARGS...`: runs the warplens CLI with ARGS (the installed one: $WARPLENS_BIN, PATH,
or this checkout's build/bin), replacing this process so its exit status and signals are the CLI's."""
import os
import sys

from ._find import find_cli


def main():
    cli = find_cli()
    if not cli:
        sys.stderr.write("warplens: the warplens CLI was not found: install warplens (cmake --install build "
                         "--prefix PREFIX) and put PREFIX/bin on PATH, or set WARPLENS_BIN\n")
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cli, [cli] + sys.argv[1:])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
