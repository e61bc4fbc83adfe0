// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * svodctl's listings: one table model, printed as aligned columns (the
 * default), as --raw (space-separated, exact numbers, spaces and
 * backslashes escaped as \x20 and \x5c, like lsblk --raw), or as --json:
 *   { "<listing>": [ { "<key>": value, ... }, ... ] }
 * with every column of the listing (whatever -o says), numbers as JSON
 * numbers (sizes in bytes) and absent values as null. The keys and their
 * meaning are the stable schema documented in svodctl(1); new keys may be
 * added, none is renamed or removed.
 *
 * Why not libsmartcols (what lsblk and findmnt use): the guest harness runs
 * static binaries and Debian's libsmartcols-dev ships no libsmartcols.a, so
 * the guest's svodctl could not link it; this printer is the one both
 * builds share.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "svodctl.h"

/**
 * svodctl_out_opt() - take one output option of a listing
 * @c: what svodctl_getopt() returned (SVODCTL_OUT_SHORTOPTS' letters)
 * @arg: its optarg
 * @o: the options so far (zeroed by the caller before the first)
 *
 * --json (-J), --raw (-r), --noheadings (-n), -o/--output COLUMNS.
 *
 * Context: any.
 * Return: 1 if @c is an output option, else 0.
 */
int svodctl_out_opt(int c, const char *arg, struct svodctl_out *o)
{
	switch (c) {
	case 'J':
		o->json = 1;
		break;
	case 'r':
		o->raw = 1;
		break;
	case 'n':
		o->noheadings = 1;
		break;
	case 'o':
		o->columns = arg;
		break;
	default:
		return 0;
	}
	o->any = 1;
	return 1;
}

/**
 * svodctl_table_of() - set up a table for a listing's columns
 * @t: the table
 * @l: the listing
 *
 * Context: any.
 */
void svodctl_table_of(struct svodctl_table *t, const struct svodctl_listing *l)
{
	memset(t, 0, sizeof(*t));
	t->name = l->name;
	t->cols = l->cols;
	t->nr_cols = l->nr_cols;
}

static int col_find(const struct svodctl_table *t, const char *name, size_t len)
{
	unsigned int c;

	for (c = 0; c < t->nr_cols; c++)
		if ((strlen(t->cols[c].name) == len && !strncasecmp(t->cols[c].name, name, len)) ||
		    (strlen(t->cols[c].key) == len && !strncasecmp(t->cols[c].key, name, len)))
			return (int)c;
	return -1;
}

/**
 * svodctl_table_init() - an empty table with the columns -o asks for
 * @t: the table; @t->name, @t->cols and @t->nr_cols set by the caller
 * @columns: -o's argument ("ID,NAME", "+DEVICE" adds to the defaults), or
 *	NULL for the columns marked default
 *
 * Context: any.
 * Return: 0, or -EINVAL for an unknown column (a message names the valid
 * ones).
 */
int svodctl_table_init(struct svodctl_table *t, const char *columns)
{
	const char *p = columns;
	unsigned int c;
	size_t len;
	int i;

	t->nr_sel = 0;
	t->rows = NULL;
	t->nr_rows = 0;
	if (!columns || *columns == '+') {
		for (c = 0; c < t->nr_cols && t->nr_sel < SVODCTL_MAX_COLS; c++)
			if (t->cols[c].flags & SVODCTL_COL_DEFAULT)
				t->sel[t->nr_sel++] = c;
		if (!columns)
			return 0;
		p++;
	}
	while (*p) {
		len = strcspn(p, ",");
		i = col_find(t, p, len);
		if (i < 0 || t->nr_sel == SVODCTL_MAX_COLS) {
			fprintf(stderr, "svodctl: %s: unknown column \"%.*s\"; columns:", t->name,
				(int)len, p);
			for (c = 0; c < t->nr_cols; c++)
				fprintf(stderr, " %s", t->cols[c].name);
			fputc('\n', stderr);
			return -EINVAL;
		}
		t->sel[t->nr_sel++] = (unsigned int)i;
		p += len + (p[len] == ',');
	}
	return 0;
}

/**
 * svodctl_table_row() - append a row; every cell starts absent
 * @t: the table
 *
 * Context: any.
 * Return: the row's cells (t->nr_cols of them), or NULL without memory.
 */
struct svodctl_cell *svodctl_table_row(struct svodctl_table *t)
{
	struct svodctl_cell **rows;

	rows = realloc(t->rows, (t->nr_rows + 1) * sizeof(*rows));
	if (!rows)
		return NULL;
	t->rows = rows;
	rows[t->nr_rows] = calloc(t->nr_cols, sizeof(**rows));
	if (!rows[t->nr_rows])
		return NULL;
	return rows[t->nr_rows++];
}

/**
 * svodctl_cell_str() - set a text cell
 * @cell: the cell
 * @s: the text, copied (at most SVODCTL_CELL_LEN - 1 bytes)
 *
 * Context: any.
 */
void svodctl_cell_str(struct svodctl_cell *cell, const char *s)
{
	snprintf(cell->text, sizeof(cell->text), "%s", s);
	cell->set = 1;
}

/**
 * svodctl_cell_u64() - set a numeric cell
 * @cell: the cell
 * @v: the value (bytes for a SVODCTL_COL_SIZE column)
 *
 * Context: any.
 */
void svodctl_cell_u64(struct svodctl_cell *cell, uint64_t v)
{
	cell->num = v;
	cell->set = 1;
}

/* The text of a cell as the table or --raw shows it. */
static void cell_text(const struct svodctl_col *col, const struct svodctl_cell *cell,
		      int raw, char *buf, size_t len)
{
	if (!cell->set) {
		snprintf(buf, len, "%s", raw ? "" : "-");
		return;
	}
	switch (col->type) {
	case SVODCTL_STR:
		snprintf(buf, len, "%s", cell->text);
		break;
	case SVODCTL_U64:
		snprintf(buf, len, "%" PRIu64, cell->num);
		break;
	case SVODCTL_HEX:
		snprintf(buf, len, "0x%" PRIx64, cell->num);
		break;
	case SVODCTL_SIZE:
		if (raw)
			snprintf(buf, len, "%" PRIu64, cell->num);
		else
			svodctl_size(cell->num, buf, (unsigned int)len);
		break;
	case SVODCTL_XSIZE:
		if (raw || !cell->num || cell->num & 1023)
			snprintf(buf, len, "%" PRIu64, cell->num);
		else if (cell->num & ((1 << 20) - 1))
			snprintf(buf, len, "%" PRIu64 " KiB", cell->num >> 10);
		else
			snprintf(buf, len, "%" PRIu64 " MiB", cell->num >> 20);
		break;
	case SVODCTL_PCT:
		/* num is per mille: exact to 0.1%, no floating point in JSON. */
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%s", cell->num / 10, cell->num % 10,
			 raw ? "" : "%");
		break;
	}
}

static void put_raw(const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '\\' || !isprint((unsigned char)*s))
			printf("\\x%02x", (unsigned char)*s);
		else
			putchar(*s);
	}
}

static void put_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(const struct svodctl_table *t)
{
	const struct svodctl_col *col;
	const struct svodctl_cell *cell;
	unsigned int r, c;

	printf("{\n  \"%s\": [", t->name);
	for (r = 0; r < t->nr_rows; r++) {
		printf("%s\n    {", r ? "," : "");
		for (c = 0; c < t->nr_cols; c++) {
			col = &t->cols[c];
			cell = &t->rows[r][c];
			printf("%s\"%s\": ", c ? ", " : "", col->key);
			if (!cell->set)
				printf("null");
			else if (col->type == SVODCTL_STR)
				put_json_str(cell->text);
			else if (col->type == SVODCTL_PCT)
				printf("%" PRIu64 ".%" PRIu64, cell->num / 10, cell->num % 10);
			else
				printf("%" PRIu64, cell->num);
		}
		printf("}");
	}
	printf("%s]\n}\n", t->nr_rows ? "\n  " : "");
}

/**
 * svodctl_table_print() - print and free a table
 * @t: the table
 * @o: the output options
 *
 * Context: any.
 */
void svodctl_table_print(struct svodctl_table *t, const struct svodctl_out *o)
{
	int w[SVODCTL_MAX_COLS] = { 0 };
	char buf[SVODCTL_CELL_LEN + 32];
	const struct svodctl_col *col;
	unsigned int r, s;
	int n, last;

	if (o->json) {
		print_json(t);
		goto out;
	}
	for (s = 0; s < t->nr_sel; s++) {
		col = &t->cols[t->sel[s]];
		w[s] = o->noheadings ? 0 : (int)strlen(col->name);
		for (r = 0; r < t->nr_rows; r++) {
			cell_text(col, &t->rows[r][t->sel[s]], o->raw, buf, sizeof(buf));
			n = (int)strlen(buf);
			w[s] = n > w[s] ? n : w[s];
		}
	}
	for (r = 0; r <= t->nr_rows; r++) {
		if (!r && o->noheadings)
			continue;
		for (s = 0; s < t->nr_sel; s++) {
			col = &t->cols[t->sel[s]];
			last = s + 1 == t->nr_sel;
			if (r)
				cell_text(col, &t->rows[r - 1][t->sel[s]], o->raw, buf, sizeof(buf));
			else
				snprintf(buf, sizeof(buf), "%s", col->name);
			if (s)
				putchar(' ');
			if (o->raw)
				put_raw(buf);
			else if (col->type != SVODCTL_STR)
				printf("%*s", w[s], buf);
			else if (last)
				printf("%s", buf);
			else
				printf("%-*s", w[s], buf);
		}
		putchar('\n');
	}
out:
	for (r = 0; r < t->nr_rows; r++)
		free(t->rows[r]);
	free(t->rows);
	t->rows = NULL;
	t->nr_rows = 0;
}
