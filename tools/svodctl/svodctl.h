/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * svodctl: the command-line tool of svod. Each subcommand is a function
 * int svodctl_cmd_NAME(int argc, char **argv) with argv[0] the subcommand
 * name; it returns the process exit status (0 ok, 1 failure, 2 usage, 3
 * /dev/svod missing or not permitted, 4 restore: a device absent).
 */
#ifndef SVODCTL_H
#define SVODCTL_H

#include <getopt.h>
#include <stdint.h>

#include "libsvod.h"

/* Exit statuses (svodctl(1), EXIT STATUS). */
#define SVODCTL_OK	0
#define SVODCTL_FAIL	1
#define SVODCTL_USAGE	2
/* /dev/svod missing (driver not loaded) or not openable (permission). */
#define SVODCTL_NODEV	3
/* restore: a device of the file is not present (every present one restored). */
#define SVODCTL_ABSENT	4

/* Where svod-restore.service reads the declarations (svodctl(1), FILES). */
#define SVODCTL_SAVED_PATH	"/etc/svod/declarations"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

int svodctl_cmd_tiers(int argc, char **argv);
int svodctl_cmd_top(int argc, char **argv);
int svodctl_cmd_alloc(int argc, char **argv);
int svodctl_cmd_free(int argc, char **argv);
int svodctl_cmd_resolve(int argc, char **argv);
int svodctl_cmd_stage(int argc, char **argv);
int svodctl_cmd_read(int argc, char **argv);
int svodctl_cmd_declare(int argc, char **argv);
int svodctl_cmd_undeclare(int argc, char **argv);
int svodctl_cmd_restore(int argc, char **argv);
int svodctl_declare_save(const char *cmd, const char *path);
int svodctl_cmd_run(int argc, char **argv);
int svodctl_cmd_demo(int argc, char **argv);
int svodctl_cmd_plan(int argc, char **argv);
int svodctl_cmd_bench(int argc, char **argv);

int svodctl_err(const char *cmd, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int svodctl_wants_help(int argc, char **argv);
int svodctl_help(const char *cmd, int status);
int svodctl_parse_u64(const char *cmd, const char *s, uint64_t *val);
int svodctl_parse_tier(int fd, const char *s, uint32_t *id);
int svodctl_session_fd(void);
void svodctl_size(uint64_t bytes, char *buf, unsigned int len);
int svodctl_print_tiers(int fd);
struct svodctl_out;
int svodctl_print_tiers_opts(int fd, const struct svodctl_out *o);
int svodctl_open_err(const char *cmd, int err);
unsigned char *svodctl_read_file(const char *path, uint64_t *len);

/**
 * struct svodctl_out - the output options of a listing command
 * @json: --json
 * @raw: --raw
 * @noheadings: --noheadings
 * @columns: -o's argument, or NULL
 * @any: any of them was given
 */
struct svodctl_out {
	int json;
	int raw;
	int noheadings;
	const char *columns;
	int any;
};

enum svodctl_col_type {
	SVODCTL_STR,	/* text */
	SVODCTL_U64,	/* decimal */
	SVODCTL_HEX,	/* 0x hex in tables, a number in JSON */
	SVODCTL_SIZE,	/* bytes: "64.0 MiB" in tables, exact in --raw and JSON */
	SVODCTL_PCT,	/* per mille, printed as a percentage with one decimal */
	SVODCTL_XSIZE,	/* bytes: exact in the largest unit as fdinfo ("1028 KiB") */
};

#define SVODCTL_COL_DEFAULT	1
#define SVODCTL_MAX_COLS	24
#define SVODCTL_CELL_LEN	160

/**
 * struct svodctl_col - a column of a listing
 * @name: heading and -o name ("USE%")
 * @key: JSON key ("use_pct")
 * @type: how values print
 * @flags: SVODCTL_COL_DEFAULT if shown without -o
 */
struct svodctl_col {
	const char *name;
	const char *key;
	enum svodctl_col_type type;
	unsigned int flags;
};

/**
 * struct svodctl_cell - one value
 * @set: 0 for an absent value (JSON null, "-" in tables)
 * @num: numeric value
 * @text: text value
 */
struct svodctl_cell {
	int set;
	uint64_t num;
	char text[SVODCTL_CELL_LEN];
};

/**
 * struct svodctl_table - a listing
 * @name: the JSON top-level key ("tiers")
 * @cols: every column
 * @nr_cols: columns in @cols
 * @sel: the columns shown, in order
 * @nr_sel: entries in @sel
 * @rows: rows of @nr_cols cells
 * @nr_rows: rows
 */
struct svodctl_table {
	const char *name;
	const struct svodctl_col *cols;
	unsigned int nr_cols;
	unsigned int sel[SVODCTL_MAX_COLS];
	unsigned int nr_sel;
	struct svodctl_cell **rows;
	unsigned int nr_rows;
};

/**
 * struct svodctl_listing - the columns of one listing command
 * @name: the JSON top-level key ("tiers")
 * @cols: every column, in order; the one list that the output, --help,
 *	the man page and the bash completion share
 * @nr_cols: columns in @cols
 */
struct svodctl_listing {
	const char *name;
	const struct svodctl_col *cols;
	unsigned int nr_cols;
};

extern const struct svodctl_listing svodctl_tiers_listing;
extern const struct svodctl_listing svodctl_top_listing;
extern const struct svodctl_listing svodctl_declare_listing;

/* The output options of a listing, for getopt_long (svodctl(1), OUTPUT OPTIONS). */
#define SVODCTL_OUT_SHORTOPTS	"Jo:rn"
#define SVODCTL_OUT_LONGOPTS					\
	{ "json", no_argument, NULL, 'J' },			\
	{ "output", required_argument, NULL, 'o' },		\
	{ "raw", no_argument, NULL, 'r' },			\
	{ "noheadings", no_argument, NULL, 'n' },		\
	{ "help", no_argument, NULL, 'h' }

int svodctl_getopt(int argc, char **argv, const char *shortopts,
		   const struct option *longopts);
int svodctl_no_opts(int argc, char **argv, int *status);
int svodctl_out_opt(int c, const char *arg, struct svodctl_out *o);
void svodctl_table_of(struct svodctl_table *t, const struct svodctl_listing *l);
int svodctl_table_init(struct svodctl_table *t, const char *columns);
struct svodctl_cell *svodctl_table_row(struct svodctl_table *t);
void svodctl_cell_str(struct svodctl_cell *cell, const char *s);
void svodctl_cell_u64(struct svodctl_cell *cell, uint64_t v);
void svodctl_table_print(struct svodctl_table *t, const struct svodctl_out *o);

#endif /* SVODCTL_H */
