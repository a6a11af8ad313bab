"""bench_speed.py's report: the Markdown section of docs/benchmarks.md, one part per workload."""
from __future__ import annotations

from speed_figures import COMMANDS, TAIL_SHARE


def fmt_ratio(x: float) -> str:
    return f"{x:.3f}×" if x < 0.1 else f"{x:.2f}×"


def figures_table(summary: dict) -> str:
    lines = ["| figure | ours s | reference s | ratio (median of rounds) | per round | CPU-time ratio | target | met |",
             "|---|---:|---:|---:|---|---:|---:|:---:|"]
    for f in summary["figures"]:
        if not f["available"]:
            why = f" ({f['why']})" if f.get("why") else ""
            lines.append(f"| {f['title']} | not available{why} | | | | | {f['target_text']} | – |")
            continue
        met = "–" if f["target"] is None else ("yes" if f["met"] else "**no**")
        lines.append(f"| {f['title']} | {f['ours_s']:.2f} | {f['ref_s']:.2f} | **{fmt_ratio(f['ratio'])}** | "
                     f"{', '.join(fmt_ratio(x) for x in f['ratios'])} | {fmt_ratio(f['cpu_ratio'])} | "
                     f"{f['target_text']} | {met} |")
    return "\n".join(lines)


def memory_table(summary: dict) -> str:
    lines = ["| command | peak RSS MB | wall s (median) | target | met |", "|---|---:|---:|---:|:---:|"]
    for m in summary["memory"]:
        target = f"≤ {m['target_mb']} MB" if m["target_mb"] else "(reference)"
        met = "–" if m["met"] is None else ("yes" if m["met"] else "**no**")
        lines.append(f"| {m['title']} | {m['peak_mb']:.1f} | {m['wall_s']:.2f} | {target} | {met} |")
    return "\n".join(lines)


def command_argv(name: str) -> str:
    """A command's arguments as the report shows them: P, START, STOP, T, KT and KV left as letters."""
    return " ".join(COMMANDS[name][1]).replace("{P}", "P").replace("{START}", "START").replace(
        "{STOP}", "STOP").replace("{T}", "T").replace("{KT}", "KT").replace("{KV}", "KV")


def profile_markdown(prof: dict) -> str:
    lines = [f"cProfile of `binlog-spec {command_argv(prof.get('command', 'rows'))} --jobs 1` on {prof['label']}, "
             f"output to /dev/null: {prof['total_s']:.2f} s under the profiler (which inflates call-heavy code). "
             f"Top {len(prof['top_tottime'])} by own time:", "",
             "| function | calls | own s | cumulative s |", "|---|---:|---:|---:|"]
    for r in prof["top_tottime"]:
        lines.append(f"| `{r['function']}` | {r['ncalls']:,} | {r['tottime_s']:.2f} | {r['cumtime_s']:.2f} |")
    return "\n".join(lines)


def workload_text(meta: dict) -> str:
    name = meta.get("workload")
    shape = ("ROW format, FULL row image, {md} metadata, CRC32, ANNOTATE_ROWS events"
             .format(md=meta.get("metadata", "FULL")))
    head = (f"`workloads.{'oltp' if name == 'oltp' else 'mixed'}(scale={meta['params']['scale']}"
            f"{', metadata=' + repr(meta['metadata']) if name == 'mixed-minimal' else ''})` (key {meta['key']}, "
            f"made by {meta['server_version']} in {meta['generated_in_s']} s)") if name else ""
    if name == "oltp":
        return (f"{head}: `sbtest1(id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))`, {meta['inserts']:,} rows "
                f"inserted 1000 per INSERT (one statement per transaction), then {meta['updates']:,} single-row "
                f"`UPDATE ... SET k=k+1 WHERE id=…` and {meta['deletes']:,} single-row `DELETE ... WHERE id=…`, each "
                f"its own transaction: {meta['transactions']:,} transactions, {meta['row_changes']:,} row changes, "
                f"one binlog of {meta['bytes'] / 1e6:,.1f} MB ({shape}).")
    if name in ("mixed", "mixed-minimal"):
        return (f"{head}: `shop.customers` (INT UNSIGNED, VARCHAR utf8mb4 and ascii, ENUM, DECIMAL(12,2), SET, "
                f"DATETIME(6), JSON), `shop.orders` (BIGINT, INT UNSIGNED, DECIMAL, ENUM, TIMESTAMP(3)) and "
                f"`shop.places` (BIT, YEAR, DATE, TIME(3), TIME, DATETIME, TIMESTAMP(6), VARCHAR latin1, TEXT, BLOB, "
                f"GEOMETRY, DECIMAL(30,10), TINYINT, MEDIUMINT UNSIGNED, DOUBLE): {meta['customers']:,} customers "
                f"inserted 1000 per INSERT, {meta['places']:,} places 100 per INSERT, then interleaved "
                f"{meta['orders']:,} orders (1, 1, 3, 10 and 20 per INSERT in turn) and single-row UPDATEs of customers "
                f"and places, then "
                f"bulk UPDATEs and DELETEs (25,000 rows per statement on orders, one statement each on customers), "
                f"then single-row DELETEs; every statement its own transaction, their times (`SET TIMESTAMP`) "
                f"spread evenly over 12 hours: {meta['transactions']:,} transactions, {meta['row_changes']:,} row "
                f"changes ({meta['inserts']:,} inserts, {meta['updates']:,} updates, {meta['deletes']:,} deletes), "
                f"one binlog of {meta['bytes'] / 1e6:,.1f} MB ({shape}). MariaDB's JSON is LONGTEXT: it is "
                "logged as text.")
    return f"the file `{meta['path']}` ({meta['bytes'] / 1e6:,.3f} MB)."


def part(w: dict, rounds: int) -> list[str]:
    """One workload's part of the report: what it is, its figures, its memory, its profiles."""
    tail, window, table = w["tail"], w["window"], w.get("table")
    params = [f"`P` = {tail['pos']:,}, the first GTID event in the last {TAIL_SHARE:.0%} of the file "
              f"({tail['share_after']:.2%} of the bytes follow it), found with `binlog-spec events --format jsonl`"]
    if window:
        params.append(f"`START` – `STOP` = {window['start']} – {window['stop']} {window['timezone']} "
                      f"(`--timezone {window['timezone']}`), {window['how']}")
    if table:
        params.append(f"`T` = `{table['name']}`, {table['how']}")
    if w.get("key"):
        params.append(f"`KT` = `{w['key']['table']}`, `KV` = `{w['key']['value']}` (a value of its integer key)")
    text = [f"### {w['title']}", "", f"Workload: {workload_text(w['workload'])}", "",
            "; ".join(params) + ".", "", figures_table(w["summary"]), "",
            f"Peak memory of every mode (all its runs, {rounds} round(s)):", "", memory_table(w["summary"])]
    if w.get("profile"):
        head = ("The commands whose target is missed, each profiled" if w.get("profiled_missed") else
                "No command misses its target: `rows`, profiled for reference")
        text += ["", f"#### Where the time goes: {w['title']}", "",
                 f"{head}; the compiled modules' functions show as their Python callers' own time."]
        for p in w["profile"]:
            text += ["", profile_markdown(p)]
    return text


def report(ctx: dict, parts: list[dict], elapsed: float, load: tuple[float, float]) -> str:
    mach, code, args = ctx["machine"], ctx["code"], ctx["args"]
    loads = [x for w in parts for x in (w["summary"]["load1"].get("min"), w["summary"]["load1"].get("max")) if x]
    scale_opt = f" SCALE={args.scale}" if args.scale != 1 else ""
    wl_opt = f" WORKLOAD={args.workload}" if args.workload != ctx["default_workload"] else ""
    text = [
        f"**CPU: {mach.get('cpu', mach['cpu_model'])}**, {mach['nproc']} CPUs, {mach['memory']} RAM, Linux "
        f"{mach['kernel']}; {mach['python']}; {mach['mariadb_binlog']}. Run {mach['date']}, {elapsed / 60:.1f} min "
        f"in all. **Load:** the machine is shared with other developers' work; the 1-minute load average was "
        f"{load[0]:.2f} at the start and {load[1]:.2f} at the end"
        + (f", {min(loads):.2f} – {max(loads):.2f} after the measured runs" if loads else "")
        + ". Ratios of runs made back to back suffer less from it than the absolute times; a ratio that rests "
        "on interpreted code still moves with the CPU.",
        "",
        "Code measured: " + (f"the working tree at {code['commit'][:12]}"
                             + (" with uncommitted changes in src/" if code["dirty"] else "")
                             if code["commit"] else "the working tree") + f", `binlog-spec --version`: "
        f"{ctx['version']}.",
        "",
        "Reproduce (generates each workload first when its cache, `~/.cache/binlog-spec/bench/`, lacks it):",
        "",
        "```sh",
        f"make bench-speed{scale_opt}{wl_opt} ROUNDS={args.rounds}",
        "```",
        "",
        f"Each command runs in its own child process pinned to CPU {ctx['cpu']} (`taskset -c {ctx['cpu']}`; "
        "`--jobs 2` gets two CPUs), output to /dev/null, the file in the page cache; peak RSS from GNU "
        "`time -f %M`, in MB of 10^6 bytes. The two commands of a figure run back to back in each of "
        f"{args.rounds} round(s), their order alternating between rounds; times are medians, the "
        "ratio is the median of the rounds' own ratios (the per-round ratios follow it). The targets are issue "
        "29's (one core, both workloads), or issue 16's for the figures issue 29 does not list.",
    ]
    if not ctx["jobs"]:
        text += ["", "`--jobs` is not available: `binlog-spec rows --help` does not offer it, so that figure "
                 "has no measurement."]
    for w in parts:
        text += [""] + part(w, args.rounds)
    return "\n".join(text).rstrip() + "\n"
