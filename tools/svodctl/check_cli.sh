#!/bin/bash
# SPDX-License-Identifier: MIT OR GPL-2.0
#
# svodctl's command line on the host, without a device (SVOD_DEV names a
# node that does not exist, so every command that gets past its options
# exits 3): getopt_long's forms (bundled -Jn, attached -d0.5, a bad option
# named), the exit statuses of svodctl(1) in every mode (`run` included),
# and the column lists: `svodctl COMMAND --help` and the man page must say
# the same, and the bash completion asks the binary (the command list too);
# restore's refusals of a malformed file and declare --save's options.
# Usage: check_cli.sh SVODCTL MANPAGE COMPLETION
set -u
svodctl=$1 man=$2 completion=$3
export SVOD_DEV=/nonexistent/svod
rc=0 out=$(mktemp) err=$(mktemp) tmpf=$(mktemp)
trap 'rm -f "$out" "$err" "$tmpf"' EXIT

ok() { # ok CONDITION-STATUS NAME
	if [ "$1" = 0 ]; then
		echo "ok - svodctl: $2"
	else
		echo "not ok - svodctl: $2"
		sed 's/^/#   /' "$err" | head -8
		rc=1
	fi
}

# st: run svodctl (stdin from $input), leave the status in $st.
input=
st() {
	printf '%b' "$input" | "$svodctl" "$@" >"$out" 2>"$err"
	st=$?
}
usage_said() { grep -q '^usage: svodctl' "$err"; }

st tiers -Jn
ok "$([ $st = 3 ] && ! usage_said; echo $?)" "tiers_bundled_Jn_parsed_then_exit_3 ($st)"
st tiers -Jn -oNAME,LIVE
ok "$([ $st = 3 ] && ! usage_said; echo $?)" "tiers_attached_o_value ($st)"
st tiers --output=NAME --raw --noheadings
ok "$([ $st = 3 ] && ! usage_said; echo $?)" "tiers_long_options ($st)"
st top -d0.5 -c1
ok "$([ $st = 3 ] && ! usage_said; echo $?)" "top_attached_d0.5_c1 ($st)"
st top -Jnd 0.5 --count=2
ok "$([ $st = 3 ] && ! usage_said; echo $?)" "top_bundle_ending_in_d ($st)"
st top -d0
ok "$([ $st = 2 ] && grep -q 'top: -d "0": write a number of seconds' "$err"; echo $?)" \
	"top_d0_exit_2_says_why ($st)"
st tiers --jsn
ok "$([ $st = 2 ] && [ "$(head -1 "$err")" = "svodctl: tiers: unrecognized option '--jsn'" ] &&
	sed -n 2p "$err" | grep -q '^usage: svodctl tiers'; echo $?)" \
	"tiers_jsn_named_then_usage_exit_2 ($st)"
st tiers -Jx
ok "$([ $st = 2 ] && grep -q "^svodctl: tiers: invalid option -- 'x'" "$err"; echo $?)" \
	"tiers_unknown_short_in_bundle_named ($st)"
st top -d
ok "$([ $st = 2 ] && grep -q "^svodctl: top: option requires an argument -- 'd'" "$err"; echo $?)" \
	"top_d_without_value_named ($st)"
st declare --json=1
ok "$([ $st = 2 ] && grep -q "^svodctl: declare: option '--json' doesn't allow an argument" "$err"; echo $?)" \
	"declare_json_with_value_named ($st)"
st tiers extra
ok "$([ $st = 2 ] && usage_said; echo $?)" "tiers_extra_argument_exit_2 ($st)"
st tiers -Jh
ok "$([ $st = 0 ] && grep -q '^usage: svodctl tiers' "$out"; echo $?)" "tiers_help_in_bundle_exit_0 ($st)"
st help bogus
ok "$([ $st = 2 ] && grep -q 'no command "bogus"' "$err"; echo $?)" "help_unknown_command_exit_2 ($st)"
st alloc 0 4k --hold=1
ok "$([ $st = 2 ] && grep -q "option '--hold' doesn't allow an argument" "$err"; echo $?)" \
	"alloc_long_only_option_with_value_named ($st)"
st alloc --hold 0 4k </dev/null
ok "$([ $st = 3 ] && ! usage_said; echo $?)" "alloc_hold_before_positionals ($st)"

# run: one command per line on one open file, getopt reset between lines.
input='alloc 0 4k\n'
st run
ok "$([ $st = 3 ] && grep -q 'not loaded' "$err"; echo $?)" "run_driver_missing_exit_3 ($st)"
input='stage 0x10001 0 --pattern 7 --length 16 --cpu\nread 0x10001 0 16 --out /dev/null --dma\n'
st run
ok "$([ $st = 3 ] && ! usage_said && [ "$(grep -c 'not loaded' "$err")" = 2 ]; echo $?)" \
	"run_stage_read_options_after_positionals ($st)"
input='tiers -Jx\ntiers --jsn\n'
st run
ok "$([ $st = 2 ] && grep -q "invalid option -- 'x'" "$err" &&
	grep -q "unrecognized option '--jsn'" "$err"; echo $?)" "run_getopt_reset_between_lines ($st)"
input='tiers -xJn\ntiers\n'
st run
ok "$([ $st = 3 ] && [ "$(grep -c 'not loaded' "$err")" = 1 ]; echo $?)" \
	"run_line_after_broken_bundle_parses ($st)"
input='bogus\n'
st run
ok "$([ $st = 2 ] && grep -q 'no command "bogus" in a run' "$err"; echo $?)" \
	"run_unknown_command_exit_2 ($st)"
input='# nothing\n\n'
st run
ok "$([ $st = 0 ]; echo $?)" "run_comments_only_exit_0 ($st)"
input=
st run /nonexistent/script
ok "$([ $st = 1 ] && grep -q ENOENT "$err"; echo $?)" "run_missing_file_exit_1 ($st)"
st run --bogus
ok "$([ $st = 2 ] && grep -q "run: unrecognized option '--bogus'" "$err"; echo $?)" \
	"run_bad_option_named ($st)"

# declare --save and restore (persist.c): everything that needs no configfs.
# A malformed file is refused whole with its line named, before svodctl
# looks for svod (exit 2 on a host without it, not 3).
printf '# saved\n\n0000:00:04.0 w bar=2 offset=0 size=48M\n0000:00:04.0 s bar=2 offset=48M size=1MB\n' >"$tmpf"
st restore "$tmpf"
ok "$([ $st = 2 ] && grep -q "^svodctl: restore: EINVAL: $tmpf:4: not \"<pci name> <name> bar=" "$err" &&
	grep -q 'Nothing was restored.$' "$err"; echo $?)" "restore_malformed_line_named_exit_2 ($st)"
printf '0000:00:04.0 w bar=2 offset=0 size=1\n0000:00:04.0 w bar=2 offset=1 size=1\n' >"$tmpf"
st restore "$tmpf"
ok "$([ $st = 2 ] && grep -q "EEXIST: $tmpf:2: a tier this device already has" "$err"; echo $?)" \
	"restore_tier_twice_named_exit_2 ($st)"
printf '0000:0:4.0 w bar=2 offset=0 size=1\n' >"$tmpf"
st restore "$tmpf"
ok "$([ $st = 2 ] && grep -q "EINVAL: $tmpf:1: .*as the kernel spells it" "$err"; echo $?)" \
	"restore_bad_pci_name_exit_2 ($st)"
printf '0000:00:04.0 w bar=2 offset=0 size=16E\n' >"$tmpf"
st restore "$tmpf"
ok "$([ $st = 2 ] && grep -q "ERANGE: $tmpf:1: a number is beyond" "$err"; echo $?)" \
	"restore_number_too_large_exit_2 ($st)"
printf '0000:00:04.0\0\n' >"$tmpf"
st restore "$tmpf"
ok "$([ $st = 2 ] && grep -q "has a NUL byte: not a text file" "$err"; echo $?)" \
	"restore_binary_file_exit_2 ($st)"
printf '0000:00:04.0 w bar=2 offset=0 size=1; s bar=2 offset=1 size=1\n0000:00:05.0\n' >"$tmpf"
st restore --force "$tmpf"
ok "$([ $st = 3 ] && grep -q 'svod/ does not exist\|svod does not exist' "$err" &&
	grep -q 'modprobe svod' "$err"; echo $?)" "restore_good_file_without_svod_exit_3 ($st)"
input='# nothing saved\n\n'
st restore -
ok "$([ $st = 0 ] && [ ! -s "$out" ]; echo $?)" "restore_empty_stdin_exit_0 ($st)"
input=
st restore /nonexistent/declarations
ok "$([ $st = 1 ] && grep -q "ENOENT: .*(reading /nonexistent/declarations)" "$err"; echo $?)" \
	"restore_missing_file_exit_1 ($st)"
st restore
ok "$([ $st = 2 ] && usage_said; echo $?)" "restore_without_file_exit_2 ($st)"
st restore -fx "$tmpf"
ok "$([ $st = 2 ] && grep -q "^svodctl: restore: invalid option -- 'x'" "$err"; echo $?)" \
	"restore_bad_option_named_exit_2 ($st)"
st restore a b
ok "$([ $st = 2 ] && usage_said; echo $?)" "restore_two_files_exit_2 ($st)"
st declare --save -J
ok "$([ $st = 2 ] && usage_said; echo $?)" "declare_save_with_output_option_exit_2 ($st)"
st declare --save a b
ok "$([ $st = 2 ] && usage_said; echo $?)" "declare_save_two_files_exit_2 ($st)"
echo keep >"$tmpf"
st declare --save "$tmpf"
ok "$([ $st = 3 ] && grep -q 'modprobe svod' "$err" && [ "$(cat "$tmpf")" = keep ]; echo $?)" \
	"declare_save_without_svod_exit_3_file_kept ($st)"
st declare --save=x
ok "$([ $st = 2 ] && grep -q "option '--save' doesn't allow an argument" "$err"; echo $?)" \
	"declare_save_with_value_named ($st)"
input='restore /nonexistent/declarations\n'
st run
ok "$([ $st = 1 ]; echo $?)" "run_restore_line_exit_1 ($st)"
input=

# One list of commands: svodctl --help's, the completion's, the man page's.
cmds_help=$("$svodctl" --help | sed -n 's/^  svodctl \([a-z]*\) .*/\1/p' | tr '\n' ' ')
# shellcheck disable=SC1090
cmds_comp=$(. "$completion" 2>/dev/null; PATH=$(dirname "$svodctl"):$PATH _svodctl_commands | tr '\n' ' ')
missing=
for c in $cmds_help; do
	grep -qE "(^\.B |\\\\fB)$c( |\\\\|\$)" "$man" || missing="$missing $c"
done
echo "help: $cmds_help; completion: $cmds_comp; not in the man page:$missing" >"$err"
ok "$(echo "$cmds_help" | grep -q ' restore ' && [ "$cmds_comp" = "$cmds_help" ] &&
	[ -z "$missing" ]; echo $?)" "commands_help_equals_completion_and_man_page"

# One list of columns per listing: --help, the man page and the completion.
cols_help=$(for c in tiers top declare; do
	"$svodctl" "$c" --help | grep -o 'Columns (default marked \*): [^.]*\.'
done)
# The man page's text lines, joined: its lists may wrap.
cols_man=$(grep -v '^\.' "$man" | tr '\n' ' ' | grep -o 'Columns (default marked \*): [^.]*\.' |
	tr -s ' ')
echo "$cols_help" >"$err"
echo "--- man:" >>"$err"
echo "$cols_man" >>"$err"
ok "$([ "$(echo "$cols_help" | wc -l)" = 3 ] && [ "$cols_help" = "$cols_man" ]; echo $?)" \
	"columns_help_equals_man_page (tiers top declare)"
for c in tiers top declare; do
	want=$("$svodctl" "$c" --help | grep -o 'Columns (default marked \*): [^.]*\.' |
		sed 's/^[^:]*: //; s/\.$//; s/\*//g')
	# shellcheck disable=SC1090
	got=$(. "$completion" 2>/dev/null; PATH=$(dirname "$svodctl"):$PATH _svodctl_columns "$c")
	echo "help: $want; completion: $got" >"$err"
	ok "$([ -n "$want" ] && [ "$got" = "$want" ]; echo $?)" "completion_columns_$c"
done
exit $rc
