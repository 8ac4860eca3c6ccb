"""GPU suite: checks the session `warplens run` wrote for tests/gpu/torch_workload.py 20.
Every kernel must be timed and linked to the API call that launched it (cuBLAS matmuls included,
which launch through cudaLaunchKernelExC / cuLaunchKernelEx), graph replays must own their
kernels, NVTX ranges and copies must all be there, and nothing may be lost."""
import sqlite3
import sys

from pycheck import check, summary


def main(path: str) -> int:
    db = sqlite3.connect(path)
    q = lambda sql: db.execute(sql).fetchone()[0]
    n = q("SELECT count(*) FROM kernel")
    check(n > 100, "kernels recorded", n)
    unlinked = q("SELECT count(*) FROM kernel WHERE api_id IS NULL")
    check(unlinked == 0, "every kernel linked to its launch call", unlinked)
    untimed = q("SELECT count(*) FROM kernel WHERE has_timestamps = 0")
    check(untimed == 0, "every kernel timed", untimed)
    # CUPTI's queued time is taken inside the launch call: the recorder's call times must bracket it
    outside = q("SELECT count(*) FROM kernels k JOIN api_call a ON a.id = k.api_id WHERE k.graph_id IS NULL"
                " AND k.queued_ns IS NOT NULL AND NOT (k.queued_ns BETWEEN a.start_ns AND a.end_ns)")
    check(outside == 0, "CUPTI's queued time inside its launch call's recorded start..end", outside)
    gemm = q("SELECT count(*) FROM kernels k JOIN api_call a ON a.id = k.api_id WHERE (k.name LIKE '%gemm%'"
             " OR k.name LIKE '%nvjet%' OR k.name LIKE '%xmma%') AND a.category = 'launch'")
    check(gemm >= 20, "cuBLAS matmul kernels linked to their launch calls", gemm)
    launches = [r[0] for r in db.execute("SELECT DISTINCT a.name FROM kernels k JOIN api_call a ON a.id = k.api_id")]
    print("  launch APIs seen:", ", ".join(sorted(launches)))
    graph = q("SELECT count(*) FROM (SELECT k.api_id FROM kernel k JOIN api_call a ON a.id = k.api_id"
              " WHERE a.category = 'graph_launch' GROUP BY k.api_id)")
    check(graph == 10, "10 graph replays, each owning its kernels", graph)
    steps = q("SELECT count(*) FROM nvtx_range WHERE name LIKE 'step-%' AND end_ns > start_ns")
    check(steps == 20, "20 NVTX step ranges from torch.cuda.nvtx", steps)
    h2d = q("SELECT count(*) FROM memcpy WHERE kind = 'HtoD' AND src_kind = 'pinned' AND bytes = 16777216")
    check(h2d == 20, "20 pinned HtoD copies of 16 MiB", h2d)
    d2h = q("SELECT count(*) FROM memcpy WHERE kind = 'DtoH' AND bytes = 4194304")
    check(d2h == 20, "20 DtoH copies of 4 MiB", d2h)
    lost = q("SELECT coalesce(sum(count), 0) FROM lost")
    check(lost == 0, "nothing lost", lost)
    complete = q("SELECT value FROM meta WHERE key = 'complete'")
    check(complete == "1", "session complete", complete)
    return summary("torch")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
