"""PASS/FAIL lines for the GPU suite's Python checkers (check_torch_session.py, check_torch_ops.py):
check() prints one line per assertion and counts; summary() prints the totals and gives the exit
status."""
passed = failed = 0


def check(cond, what, got=None):
    global passed, failed
    if cond:
        passed += 1
        print(f"PASS {what}")
    else:
        failed += 1
        print(f"FAIL {what} (got {got})")


def summary(name):
    print(f"{name}: {passed} passed, {failed} failed")
    return 1 if failed else 0
