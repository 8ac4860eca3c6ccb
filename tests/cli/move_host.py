#!/usr/bin/env python3
"""Makes a session look recorded on another host whose clock runs NS nanoseconds ahead: every
process's hostname becomes HOST and every time column gains NS. For the two-host merge checks
(tests/cli/test_merge_ranks_cli.sh on real NCCL sessions, tests/gpu/test_multirank.sh on the GPU
machine): merge must then estimate that host's offset as -NS.

usage: move_host.py SESSION HOST NS"""
import sqlite3
import sys

# the time columns of the tables a rank session fills (store/session_contract.c, WL_COL_TIME)
TIMES = {"kernel": "start_ns end_ns queued_ns submitted_ns completed_ns", "memcpy": "start_ns end_ns",
         "memset": "start_ns end_ns", "api_call": "start_ns end_ns", "nvtx_range": "start_ns end_ns",
         "process": "start_ns end_ns", "sync": "start_ns end_ns", "nvtx_mark": "ts_ns",
         "device_sample": "ts_ns window_start_ns"}


def main(path, host, ns):
    c = sqlite3.connect(path)
    c.execute("UPDATE process SET hostname = ?", (host,))
    for table, cols in TIMES.items():
        for col in cols.split():
            c.execute(f"UPDATE {table} SET {col} = {col} + ? WHERE {col} IS NOT NULL", (ns,))
    c.commit()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.splitlines()[-1])
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
