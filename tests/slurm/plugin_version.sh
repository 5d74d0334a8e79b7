#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_version.sh FABRICPLACE PLUGIN_SO OTHER_PLUGIN_SO [SPEC]: a SPANK plugin loads only
# on the Slurm major.minor it was built for, and `fabricplace slurm check` says so plainly
# (docs/slurm.md, "Slurm versions"). On the lab of one Slurm version, with PLUGIN_SO built
# for it and OTHER_PLUGIN_SO built for the other (22.05 and 24.11):
#   - `slurm check` passes PLUGIN_SO (exit 0, "it loads"), from --plugin and from a
#     plugstack.conf;
#   - with OTHER_PLUGIN_SO listed `optional`, Slurm really refuses it: srun and sbatch reject
#     --fabric-tp as an unrecognized option; a plain srun runs with Slurm's own loader lines
#     only; `slurm check` (the lab's slurm.conf and
#     plugstack.conf, nothing given) exits 1 naming both versions and what that means;
#   - listed `required`, every srun fails, and `slurm check` says that instead;
#   - `slurm check --slurm-version` of the other series: its version matches, and it loads
#     (as Slurm would: in a child, with libslurmfull.so) or not: the 24.11 plugin, built on
#     Debian 13, needs a GLIBCXX Debian 12 lacks, which `slurm check` reports.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_version.sh FABRICPLACE PLUGIN_SO OTHER_PLUGIN_SO [SPEC]}
PLUGIN=${2:?}
OTHER=${3:?}
spec=${4:-fat2:leaves=2,down=2,up=2}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"
for f in "$PLUGIN" "$OTHER"; do [[ -r $f ]] || { echo "FAIL: no plugin file $f"; exit 1; }; done

lab_start_plugin "$spec" "$OTHER"
here=$FABRICPLACE_LAB_SLURM                 # e.g. 22.05.8
series=${here%.*}                           # 22.05
case $series in 22.05) other_series=24.11 ;; 24.11) other_series=22.05 ;;
  *) echo "FAIL: a lab of Slurm $here: this test knows 22.05 and 24.11"; exit 1 ;; esac
echo "lab: Slurm $here; own plugin $PLUGIN, other $OTHER ($other_series)"

# ---- the plugin built for this Slurm ----------------------------------------------------
out=$("$FABRICPLACE" slurm check --plugin "$PLUGIN" 2>&1); rc=$?
hex=$(printf '0x%02x%02x' "${series%.*}" "$((10#${series#*.}))")   # 22.05 -> 0x1605
check "slurm check --plugin (own): exit 0, built for $series, Slurm $here from srun --version, it loads (rc $rc: $out)" \
  grep -qxE "0\\|fabricplace: $PLUGIN \\(--plugin\\): built for Slurm $series \\(plugin_version $hex[0-9a-f]{2}, $series\\.[0-9]+\\); Slurm here is $here \\(srun --version\\): it loads" <<<"$rc|$out"
echo "optional $PLUGIN fabric=$LAB_DIR/etc/fabric.json" >own-plugstack.conf
out=$("$FABRICPLACE" slurm check --plugstack own-plugstack.conf 2>warn.txt); rc=$?
check "slurm check --plugstack listing it: exit 0, names the line ($out)" \
  grep -qxE "0\\|fabricplace: $PLUGIN \\(own-plugstack.conf:1\\): built for Slurm $series .*: it loads" <<<"$rc|$out"
check "  ... and warns that this slurm.conf has no job_submit.lua ($(cat warn.txt))" \
  grep -qxF "fabricplace: warning: $SLURM_CONF: no JobSubmitPlugins=lua: without etc/job_submit.lua in slurmctld, --fabric-tp jobs are ordered at launch but not steered at submission (constrain mode; exact mode too on Slurm 23.11+)" warn.txt

# ---- the other version's plugin, optional: Slurm drops it, quietly ---------------------------
out=$(srun -N 2 --fabric-tp=2 true 2>&1); rc=$?
check "Slurm refuses it: srun rejects --fabric-tp (rc $rc: $(head -1 <<<"$out"))" \
  grep -qE "unrecognized option '--fabric-tp=2'" <<<"$out"
out=$(sbatch --fabric-tp=2 -N 2 --wrap true 2>&1); rc=$?
check "  ... and so does sbatch (rc $rc)" grep -qE "unrecognized option '--fabric-tp=2'" <<<"$out"
out=$(srun -N 1 true 2>&1); rc=$?
if [[ $series == 22.05 ]]; then
  # 22.05 drops an optional plugin of another version with one error line; but the 24.11
  # plugin, built on Debian 13, does not even load on Debian 12: its libstdc++ or glibc is too
  # old (GLIBCXX_3.4.32, GLIBC_2.38: the loader names the first it misses), and that dlopen
  # failure Slurm prints at error level.
  check "  ... a plain srun runs; Slurm itself says only that it cannot load it (rc $rc: $(paste -sd' ' <<<"$out"))" \
    bash -c '[[ $0 == 0 ]] && { [[ -z $1 ]] || ! grep -vE "plugin_load_from_file|spank: .*(Dlopen of plugin file failed|Incompatible plugin version)" <<<"$1" | grep -q .; }' "$rc" "$out"
  out=$(srun -v -N 1 true 2>&1)
  check "  ... srun -v says why (Slurm's own line)" grep -qE 'Incompatible Slurm plugin|GLIBC(XX)?_[0-9.]+. not found' <<<"$out"
else                             # 24.11 prints Slurm's own error lines, and runs
  check "  ... a plain srun runs; Slurm itself says why (rc $rc: $(paste -sd' ' <<<"$out"))" \
    bash -c '[[ $0 == 0 ]] && grep -q "Incompatible Slurm plugin" <<<"$1" && ! grep -qv "Incompatible" <<<"$1"' "$rc" "$out"
fi
out=$("$FABRICPLACE" slurm check 2>&1); rc=$?
check "slurm check (the lab's slurm.conf and plugstack.conf): exit 1 ($rc)" test "$rc" == 1
check "  ... names the plugin, its line, both versions and what optional means ($out)" \
  grep -qE "^fabricplace: error: $OTHER \\($LAB_DIR/etc/plugstack.conf:1\\): built for Slurm $other_series \\(plugin_version 0x[0-9a-f]{6}, $other_series\\.[0-9]+\\), but Slurm here is $here \\(srun --version\\): Slurm refuses it .*as it is .optional., runs jobs without it.*: srun, salloc and sbatch reject --fabric-\\* as unrecognized options; install the plugin built against Slurm $series's headers" <<<"$out"
out=$("$FABRICPLACE" slurm check --plugin "$OTHER" --slurm-version "$other_series" 2>&1); rc=$?
if [[ $series == 22.05 ]]; then
  # The version matches what is asked, but the plugin built on Debian 13 needs a libstdc++ or
  # glibc Debian 12 lacks: `slurm check` loads it (in a child) as Slurm would, and says so.
  check "slurm check --slurm-version $other_series: the version matches, but it does not load on Debian 12 (rc $rc: $out)" \
    grep -qE "^1\|fabricplace: error: $OTHER \(--plugin\): built for Slurm $other_series .*; Slurm here is $other_series\.0 \(--slurm-version\), but it does not load on this machine: .*version .GLIBC(XX)?_[0-9.]+. not found.*; build it on this distribution \(or one no newer\), against Slurm $other_series's headers$" <<<"$rc|$out"
else
  check "slurm check --slurm-version $other_series: the 22.05 plugin, built on Debian 12, loads on Debian 13 (rc $rc: $out)" \
    grep -qE "^0\|fabricplace: $OTHER \(--plugin\): built for Slurm $other_series .*: it loads$" <<<"$rc|$out"
fi

# ---- required: every srun fails -----------------------------------------------------------
echo "required $OTHER fabric=$LAB_DIR/etc/fabric.json" >"$LAB_DIR/etc/plugstack.conf"
out=$(timeout 60 srun -N 1 true 2>&1); rc=$?
check "required: a plain srun fails (rc $rc: $(head -2 <<<"$out" | paste -sd' '))" test "$rc" != 0
out=$("$FABRICPLACE" slurm check 2>&1); rc=$?
check "slurm check says required fails every job (rc $rc)" \
  grep -qE "as it is .required., every srun, salloc, sbatch and job step fails" <<<"$out"
: >"$LAB_DIR/etc/plugstack.conf"

[[ $fails == 0 ]] || { LAB_KEEP=1; echo "FAIL: $fails check(s)"; exit 1; }
echo "PASS: plugin versions on Slurm $here"
