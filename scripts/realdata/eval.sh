#!/usr/bin/env bash
# eval.sh measures sqpredict on the real CI histories of ../shared/ci-data (issue 12):
# it imports each source (BuildFast, TravisTorrent) with `trainer import`, trains one
# bundle per repository with `trainer train` (the README's route for imported histories),
# and tabulates each bundle's holdout metrics (metrics.json) beside the free baselines:
# P-succ log loss of the champion vs the repository pass rate and the last outcome, AUC;
# build time (BuildFast only, TravisTorrent has no durations) NLL vs the per-repository
# LogNormal and Zuul's mean of 10, median APE, 80% and 95% interval coverage.
#
# Needs only Go, bash, awk and the data. It builds the trainer once into a temporary
# folder and runs every training under nice (the machine may be shared).
#
# Usage: scripts/realdata/eval.sh [--data DIR] [--out DIR] [--window 90d] [--sources "buildfast travistorrent"]
#                                 [--errored failed|infra] [--imputed-duration D] [--challengers LIST] [--repos N]
#                                 [--config FILE]
#   --data      the ci-data folder (default: ../shared/ci-data next to the repository, or $CI_DATA)
#   --out       where histories, registries, logs and tables go (default /tmp/sqpredict-realdata)
#   --window    train's --window (default: none, train's own default of 90 days)
#   --errored   import's --errored for TravisTorrent (default: import's default, failed)
#   --imputed-duration  import's --imputed-duration (default: import's default, 1h)
#   --challengers  train's --challengers (default: none); the challenger columns need
#               gbm-success and ngboost-normal (the Normal NGBoost: LogNormal is the champion),
#               e.g. --challengers gbm-success,ngboost-normal
#   --repos N   train only the first N repositories of each source (a quick check)
#   --config    train's --config (a training.Config JSON), e.g. {"buildtime": {"relative": "off"}}
#               to measure a build-time option against the default
#
# Output in --out: results.tsv (one line per repository, the numbers the tables are made
# of), summary.md (per-repository and pooled tables), logs/ (each import and training's
# output), hist/ (the imported histories) and reg/ (the registries).
#
# Train flags, and why: --allow-missing-features (imported histories have no affected
# targets, revisions or developer levels: train refuses features missing in every row
# without it), --allow-partial (no conflict pairs anywhere, no durations in
# TravisTorrent: without it train refuses a table without rows), and --baseline-gate off
# (the default gate refuses a champion that does not beat the best baseline and then
# publishes nothing, so there would be no metrics.json to read; the table's "gate"
# column says what the default gate would have done). BuildFast is imported with
# --derive-times: without times train has no window (no submission times).
#
# Pooled numbers: log loss, NLL and coverage are means over holdout rows, so the pooled
# value is the mean over repositories weighted by holdout rows, which equals the value on
# the pooled rows; AUC is the macro mean over repositories (an AUC does not pool that
# way); median APE is the macro mean of the per-repository medians, and also their median
# over repositories (robust to a repository like jOOQ whose 0 s builds give APEs in the
# thousands). "relative" counts the repositories whose LogNormal champion chose, on its
# inner validation rows, to model the duration relative to the recent mean (the relative
# or the reference form); the per-repository "form" column names the form
# (training.SelectRelative: absolute, relative, or reference, the recent mean itself).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
data=${CI_DATA:-$root/../shared/ci-data}
out=/tmp/sqpredict-realdata
window=""
sources="buildfast travistorrent"
errored=""
imputed=""
challengers=""
config=""
maxrepos=0
while (($#)); do
	case $1 in
	--data) data=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--window) window=$2; shift 2 ;;
	--sources) sources=$2; shift 2 ;;
	--errored) errored=$2; shift 2 ;;
	--imputed-duration) imputed=$2; shift 2 ;;
	--challengers) challengers=$2; shift 2 ;;
	--repos) maxrepos=$2; shift 2 ;;
	--config) config=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "eval.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
for s in $sources; do
	case $s in
	buildfast) [[ -d $data/buildfast ]] || { echo "eval.sh: no $data/buildfast (set --data)" >&2; exit 1; } ;;
	travistorrent) [[ -f $data/travistorrent-mmse/builds.csv ]] || { echo "eval.sh: no $data/travistorrent-mmse/builds.csv (set --data)" >&2; exit 1; } ;;
	*) echo "eval.sh: unknown source $s (want buildfast, travistorrent)" >&2; exit 2 ;;
	esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "eval.sh: building the trainer into $tmp" >&2
(cd "$root" && go build -o "$tmp/trainer" ./cmd/trainer)
trainer=$tmp/trainer

mkdir -p "$out/logs" "$out/hist" "$out/reg"
results=$out/results.tsv
cols=(source repo status gate train_rows
	s_n s_failures s_ll s_passrate_ll s_lastoutcome_ll s_best_baseline s_auc s_passrate_auc s_lastoutcome_auc
	b_n b_nll b_repolognormal_nll b_zuul_nll b_mdape b_zuul_mdape b_repolognormal_mdape b_cov80 b_cov95
	b_normal_nll b_normal_mdape b_normal_cov80 b_normal_cov95 champions s_gbm_ll s_gbm_auc b_relative b_form)
(IFS=$'\t'; echo "${cols[*]}") >"$results"

# metric FILE KEY prints the value of KEY in a flat metrics.json written one key per
# line (NA when absent or null).
metric() {
	awk -v k="\"$2\":" '$1 == k { v = $2; sub(/,$/, "", v); found = 1 } END { print (found && v != "null") ? v : "NA" }' "$1"
}

# extra MANIFEST KEY prints a string of the manifest's extra.
extra() {
	awk -v k="\"$2\":" '$1 == k { sub(/^[^:]*: *"/, ""); sub(/",?$/, ""); print; exit }' "$1"
}

# num prints a metric with 3 decimals (NA as is).
num() {
	if [[ $1 == NA ]]; then echo NA; else printf '%.3f' "$1"; fi
}

# repos HISTORY prints the distinct repositories of a CSV history's changes table.
repos() {
	awk -F, 'NR == 1 { for (j = 1; j <= NF; j++) if ($j == "repo") c = j; next } !seen[$c]++ { print $c }' "$1/changes.csv"
}

for src in $sources; do
	hist=$out/hist/$src
	rm -rf "$hist" "$out/reg/$src"
	echo "eval.sh: importing $src" >&2
	case $src in
	buildfast) "$trainer" import --source buildfast --in "$data/buildfast" --derive-times ${imputed:+--imputed-duration "$imputed"} --format csv --out "$hist" >"$out/logs/import-$src.log" 2>&1 ;;
	travistorrent) "$trainer" import --source travistorrent --in "$data/travistorrent-mmse/builds.csv" ${errored:+--errored "$errored"} ${imputed:+--imputed-duration "$imputed"} --format csv --out "$hist" >"$out/logs/import-$src.log" 2>&1 ;;
	esac
	sed 's/^/  /' "$out/logs/import-$src.log" | head -5 >&2
	mapfile -t names < <(repos "$hist")
	((maxrepos > 0 && maxrepos < ${#names[@]})) && names=("${names[@]:0:maxrepos}")
	mkdir -p "$out/logs/$src"
	i=0
	for repo in "${names[@]}"; do
		i=$((i + 1))
		reg=$out/reg/$src
		name=${repo//[^A-Za-z0-9._-]/_}
		log=$out/logs/$src/$name.log
		t0=$SECONDS
		args=(train --history "$hist" --registry "$reg" --repo "$repo" --allow-missing-features --allow-partial --baseline-gate off)
		[[ -n $window ]] && args+=(--window "$window")
		[[ -n $challengers ]] && args+=(--challengers "$challengers")
		[[ -n $config ]] && args+=(--config "$config")
		if version=$(nice -n 10 "$trainer" "${args[@]}" 2>"$log"); then
			dir=$reg/$name/versions/$version
			m=$dir/metrics.json
			row=("$src" "$repo" ok)
			# The default gate: the champion must beat the best baseline of each section.
			gate=serve
			for sec in success buildtime; do
				skill=skill_log_loss
				[[ $sec == buildtime ]] && skill=skill_nll
				v=$(metric "$m" "$sec.$skill")
				[[ $v != NA ]] && awk -v v="$v" 'BEGIN { exit !(v <= 0) }' && gate=refuse
			done
			row+=("$gate" "$(extra "$dir/manifest.json" train_rows | tr ' ' ';')")
			for k in success.n success.failures success.log_loss success.pass-rate.log_loss success.last-outcome.log_loss; do
				row+=("$(metric "$m" "$k")")
			done
			row+=("$(extra "$dir/manifest.json" best_baselines | tr ' ' '\n' | sed -n 's/^success=//p')")
			for k in success.auc success.pass-rate.auc success.last-outcome.auc \
				buildtime.n buildtime.nll buildtime.repo-lognormal.nll buildtime.zuul-mean10.nll \
				buildtime.mdape buildtime.zuul-mean10.mdape buildtime.repo-lognormal.mdape buildtime.coverage80 buildtime.coverage95 \
				buildtime.ngboost-normal.nll buildtime.ngboost-normal.mdape buildtime.ngboost-normal.coverage80 buildtime.ngboost-normal.coverage95; do
				row+=("$(metric "$m" "$k")")
			done
			row+=("$(extra "$dir/manifest.json" champions | tr ' ' ';')" "$(metric "$m" success.gbm.log_loss)" "$(metric "$m" success.gbm.auc)" "$(metric "$m" buildtime.relative)")
			# The build-time form of the holdout models (the first the log records, chosen on
			# validation or set by --config; the second is the refit's): absolute, relative
			# or reference.
			form=$(sed -n 's/.*build-time form [a-z ]*".* form=\([a-z]*\).*/\1/p' "$log" | head -1)
			row+=("${form:-NA}")
			(IFS=$'\t'; echo "${row[*]}") >>"$results"
			printf '[%s %d/%d] %-36s %4ds  P-succ log loss %s (pass rate %s, last outcome %s), AUC %s; build-time NLL %s (repo LogNormal %s)\n' \
				"$src" "$i" "${#names[@]}" "$repo" $((SECONDS - t0)) "$(num "${row[7]}")" "$(num "${row[8]}")" "$(num "${row[9]}")" "$(num "${row[11]}")" "$(num "${row[15]}")" "$(num "${row[16]}")" >&2
		else
			reason=$(grep -v '^time=' "$log" | tail -1 | tr '\t' ' ' | cut -c1-300)
			row=("$src" "$repo" "failed: $reason")
			for ((j = 3; j < ${#cols[@]}; j++)); do row+=(NA); done
			(IFS=$'\t'; echo "${row[*]}") >>"$results"
			printf '[%s %d/%d] %-36s %4ds  FAILED: %s\n' "$src" "$i" "${#names[@]}" "$repo" $((SECONDS - t0)) "$reason" >&2
		fi
	done
done

# The tables: per repository, then pooled per source and over all sources.
awk -F'\t' -v window="${window:-train default (90d)}" '
function f(x, d) { return x == "NA" || x == "" ? "—" : sprintf("%." d "f", x) }
function pct(x) { return x == "NA" || x == "" ? "—" : sprintf("%.1f%%", 100 * x) }
function min2(a, b) { return a == "NA" ? b : (b == "NA" ? a : (a + 0 < b + 0 ? a : b)) }
# median of the n values arr[1..n] (sorted in place by insertion; n is small).
function median(arr, n,    i, j, x) {
	for (i = 2; i <= n; i++) { x = arr[i]; for (j = i - 1; j >= 1 && arr[j] + 0 > x + 0; j--) arr[j + 1] = arr[j]; arr[j + 1] = x }
	return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next }
{
	src = $c["source"]; n_src[src]++
	if (!(src in order)) { order[src] = ++nsrc; srcname[nsrc] = src }
	line[src, n_src[src]] = $0
}
END {
	printf "# sqpredict on real CI histories (issue 12)\n\nOne bundle per repository, `trainer train --allow-missing-features --allow-partial --baseline-gate off`, window %s; holdout = the project'"'"'s own time-ordered split. LL = holdout log loss of P-succ (lower is better); best = the better of pass rate and last outcome; gate = what the default baseline gate would do.\n\n", window
	for (s = 1; s <= nsrc; s++) {
		src = srcname[s]
		printf "## %s: P-succ per repository\n\n| repo | train rows | holdout n | holdout pass rate | champion LL | pass-rate LL | last-outcome LL | beats best | AUC | gate |\n|---|---|---|---|---|---|---|---|---|---|\n", src
		for (r = 1; r <= n_src[src]; r++) {
			split(line[src, r], v, "\t")
			if (v[c["status"]] != "ok") { st = v[c["status"]]; gsub(/\|/, "/", st); if (length(st) > 160) st = substr(st, 1, 160) "…"
				printf "| %s | %s | | | | | | | | |\n", v[c["repo"]], st; nfail[src]++; continue }
			n = v[c["s_n"]]; ll = v[c["s_ll"]]; pr = v[c["s_passrate_ll"]]; lo = v[c["s_lastoutcome_ll"]]; best = min2(pr, lo)
			beat = (n != "NA" && ll != "NA" && best != "NA" && ll + 0 < best + 0)
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", v[c["repo"]], v[c["train_rows"]], n, \
				(n == "NA" || n == 0) ? "—" : sprintf("%.3f", 1 - v[c["s_failures"]] / n), f(ll, 3), f(pr, 3), f(lo, 3), beat ? "yes" : "no", f(v[c["s_auc"]], 3), v[c["gate"]]
			if (n != "NA" && ll != "NA") {
				for (k = 0; k < 2; k++) { key = k ? "all" : src
					sn[key] += n; sll[key] += n * ll; spr[key] += n * pr; slo[key] += n * lo; sbeat[key] += beat; srepos[key]++
					if (v[c["s_auc"]] != "NA") { sauc[key] += v[c["s_auc"]]; nauc[key]++ }
					if (v[c["s_gbm_ll"]] != "NA") { gn[key] += n; gll[key] += n * v[c["s_gbm_ll"]]; gbeat[key] += (v[c["s_gbm_ll"]] + 0 < best + 0); grepos[key]++ }
				}
			}
			bn = v[c["b_n"]]
			if (bn != "NA" && bn > 0 && v[c["b_nll"]] != "NA") {
				bt[src, ++nbt[src]] = line[src, r]
				# A null NLL is not finite (a LogNormal baseline on 0 s durations): such a
				# repository is left out of the pooled NLLs and their count.
				nllok = v[c["b_repolognormal_nll"]] != "NA" && v[c["b_zuul_nll"]] != "NA"
				for (k = 0; k < 2; k++) { key = k ? "all" : src
					tn[key] += bn; tc80[key] += bn * v[c["b_cov80"]]; tc95[key] += bn * v[c["b_cov95"]]; trepos[key]++
					tmd[key] += v[c["b_mdape"]]; tzmd[key] += v[c["b_zuul_mdape"]]; tbeatmd[key] += (v[c["b_mdape"]] + 0 <= v[c["b_zuul_mdape"]] + 0)
					mdl[key, trepos[key]] = v[c["b_mdape"]]; zmdl[key, trepos[key]] = v[c["b_zuul_mdape"]]; trel[key] += (v[c["b_relative"]] == 1)
					if (nllok) { qn[key] += bn; tnll[key] += bn * v[c["b_nll"]]; trl[key] += bn * v[c["b_repolognormal_nll"]]; tzu[key] += bn * v[c["b_zuul_nll"]]; qrepos[key]++
						tbeatnll[key] += (v[c["b_nll"]] + 0 <= v[c["b_repolognormal_nll"]] + 0) }
					if (v[c["b_normal_nll"]] != "NA") { ln[key] += bn; lnll[key] += bn * v[c["b_normal_nll"]]; lmd[key] += v[c["b_normal_mdape"]]; lc80[key] += bn * v[c["b_normal_cov80"]]; lc95[key] += bn * v[c["b_normal_cov95"]]; lrepos[key]++ }
				}
			}
		}
		printf "\n"
		if (nbt[src] > 0) {
			printf "## %s: build time per repository\n\n| repo | holdout n | champion NLL | repo LogNormal NLL | Zuul mean-10 NLL | champion median APE | Zuul median APE | repo LogNormal median APE | 80%% coverage | 95%% coverage | form | Normal challenger NLL |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n", src
			for (r = 1; r <= nbt[src]; r++) {
				split(bt[src, r], v, "\t")
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", v[c["repo"]], v[c["b_n"]], f(v[c["b_nll"]], 2), f(v[c["b_repolognormal_nll"]], 2), f(v[c["b_zuul_nll"]], 2), \
					f(v[c["b_mdape"]], 1) "%", f(v[c["b_zuul_mdape"]], 1) "%", f(v[c["b_repolognormal_mdape"]], 1) "%", pct(v[c["b_cov80"]]), pct(v[c["b_cov95"]]), \
					v[c["b_form"]] != "NA" && v[c["b_form"]] != "" ? v[c["b_form"]] : (v[c["b_relative"]] == 1 ? "relative" : (v[c["b_relative"]] == 0 ? "absolute" : "—")), f(v[c["b_normal_nll"]], 2)
			}
			printf "\n"
		}
	}
	printf "## Pooled\n\n| source | repos trained (failed) | holdout rows | champion LL | pass-rate LL | last-outcome LL | champion below best pooled | repos where champion beats best | macro AUC | GBM challenger LL (repos beating best) |\n|---|---|---|---|---|---|---|---|---|---|\n"
	for (s = 1; s <= nsrc + 1; s++) {
		key = s > nsrc ? "all" : srcname[s]
		if (s > nsrc) { nf = 0; for (q = 1; q <= nsrc; q++) nf += nfail[srcname[q]] } else nf = nfail[key] + 0
		if (sn[key] == 0) { printf "| %s | 0 (%d) | | | | | | | | |\n", key, nf; continue }
		a = sll[key] / sn[key]; p = spr[key] / sn[key]; l = slo[key] / sn[key]; b = p < l ? p : l
		printf "| %s | %d (%d) | %d | %.3f | %.3f | %.3f | %s | %d of %d (%.0f%%) | %s | %s |\n", key, srepos[key], nf, sn[key], a, p, l, a < b ? "yes" : "no", \
			sbeat[key], srepos[key], 100 * sbeat[key] / srepos[key], nauc[key] ? sprintf("%.3f", sauc[key] / nauc[key]) : "—", \
			grepos[key] ? sprintf("%.3f (%d of %d)", gll[key] / gn[key], gbeat[key], grepos[key]) : "—"
	}
	printf "\n| build time | repos | holdout rows | champion NLL | repo LogNormal NLL | Zuul mean-10 NLL | champion median APE (macro) | Zuul median APE (macro) | champion / Zuul median APE (median over repos) | 80%% coverage | 95%% coverage | repos NLL <= repo LogNormal | repos median APE <= Zuul | relative | Normal challenger NLL / median APE / 80%% / 95%% |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
	note = 0
	for (s = 1; s <= nsrc + 1; s++) {
		key = s > nsrc ? "all" : srcname[s]
		if (tn[key] == 0) continue
		lnx = ln[key] ? sprintf("%.2f / %.1f%% / %.1f%% / %.1f%%", lnll[key] / ln[key], lmd[key] / lrepos[key], 100 * lc80[key] / ln[key], 100 * lc95[key] / ln[key]) : "—"
		nll = qn[key] ? sprintf("%.2f | %.2f | %.2f", tnll[key] / qn[key], trl[key] / qn[key], tzu[key] / qn[key]) : "— | — | —"
		if (qrepos[key] < trepos[key]) { nll = nll " *"; note = 1 }
		delete ma; delete mz
		for (q = 1; q <= trepos[key]; q++) { ma[q] = mdl[key, q]; mz[q] = zmdl[key, q] }
		printf "| %s | %d | %d | %s | %.1f%% | %.1f%% | %.1f%% / %.1f%% | %.1f%% | %.1f%% | %d of %d | %d of %d | %d of %d | %s |\n", key, trepos[key], tn[key], nll, \
			tmd[key] / trepos[key], tzmd[key] / trepos[key], median(ma, trepos[key]), median(mz, trepos[key]), 100 * tc80[key] / tn[key], 100 * tc95[key] / tn[key], \
			tbeatnll[key], qrepos[key], tbeatmd[key], trepos[key], trel[key], trepos[key], lnx
	}
	if (note) printf "\n\\* NLLs pooled over the repositories where every NLL is finite (metrics.json has null for a baseline NLL that is not, e.g. a LogNormal on 0 s durations).\n"
}' "$results" >"$out/summary.md"
echo "eval.sh: wrote $results and $out/summary.md" >&2
cat "$out/summary.md"
