// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * `svodctl tiers`: one row per tier from SVOD_IOCTL_QUERY (its owner, group
 * and mode from the tier's sysfs device), as a table, --raw or --json
 * (table.c; the columns and JSON keys are documented in svodctl(1)).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svodctl.h"

static const struct svodctl_col tier_cols[] = {
	{ "ID", "id", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "NAME", "name", SVODCTL_STR, SVODCTL_COL_DEFAULT },
	{ "DEVICE", "device", SVODCTL_STR, SVODCTL_COL_DEFAULT },
	{ "BASE", "base", SVODCTL_HEX, SVODCTL_COL_DEFAULT },
	{ "CAPACITY", "capacity", SVODCTL_SIZE, SVODCTL_COL_DEFAULT },
	{ "USED", "used", SVODCTL_SIZE, SVODCTL_COL_DEFAULT },
	{ "USE%", "use_pct", SVODCTL_PCT, SVODCTL_COL_DEFAULT },
	{ "FREE", "free", SVODCTL_SIZE, 0 },
	{ "LARGEST", "largest_free", SVODCTL_SIZE, SVODCTL_COL_DEFAULT },
	{ "SPANS", "free_spans", SVODCTL_U64, 0 },
	{ "LIVE", "live", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "ALIGN", "align", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "RESERVED", "reserved", SVODCTL_SIZE, SVODCTL_COL_DEFAULT },
	{ "REGIONS", "reserved_regions", SVODCTL_STR, 0 },
	{ "CPU", "cpu_bytes", SVODCTL_SIZE, 0 },
	{ "DMA", "dma_bytes", SVODCTL_SIZE, 0 },
	{ "OWNER", "owner", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "GROUP", "group", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "MODE", "mode", SVODCTL_STR, SVODCTL_COL_DEFAULT },
	{ "USABLE", "usable", SVODCTL_STR, 0 },
	{ "STATE", "state", SVODCTL_STR, SVODCTL_COL_DEFAULT },
};

const struct svodctl_listing svodctl_tiers_listing = {
	.name = "tiers", .cols = tier_cols, .nr_cols = ARRAY_SIZE(tier_cols),
};

enum { TC_ID, TC_NAME, TC_DEVICE, TC_BASE, TC_CAP, TC_USED, TC_PCT, TC_FREE, TC_LARGEST,
	TC_SPANS, TC_LIVE, TC_ALIGN, TC_RESV, TC_REGIONS, TC_CPU, TC_DMA, TC_OWNER, TC_GROUP,
	TC_MODE, TC_USABLE, TC_STATE };

/* One value of tier @id's sysfs device, its newline dropped; 0 or -errno. */
static int tier_sysfs(uint32_t id, const char *attr, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/sys/class/svod/tier%" PRIu32 "/%s", id, attr);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

/* The tier's owner, group and mode; left empty (null) where sysfs has none. */
static void tier_access(struct svodctl_cell *c, uint32_t id)
{
	char buf[32];

	if (!tier_sysfs(id, "owner", buf, sizeof(buf)))
		svodctl_cell_u64(&c[TC_OWNER], strtoull(buf, NULL, 10));
	if (!tier_sysfs(id, "group", buf, sizeof(buf)))
		svodctl_cell_u64(&c[TC_GROUP], strtoull(buf, NULL, 10));
	if (!tier_sysfs(id, "mode", buf, sizeof(buf)))
		svodctl_cell_str(&c[TC_MODE], buf);
}

/* One row of the tier listing. */
static void tier_row(struct svodctl_cell *c, const struct svod_tier_info *t,
		     const struct svod_region *regions, uint32_t nr_regions)
{
	uint64_t in_use = t->capacity - t->reserved_bytes - t->free_bytes;
	uint64_t usable = t->capacity - t->reserved_bytes;
	char name[SVOD_NAME_LEN + 1], list[SVODCTL_CELL_LEN] = "";
	size_t len = 0;
	uint32_t r;

	svodctl_cell_u64(&c[TC_ID], t->id);
	snprintf(name, sizeof(name), "%.*s", SVOD_NAME_LEN, t->name);
	svodctl_cell_str(&c[TC_NAME], name);
	snprintf(name, sizeof(name), "%.*s", SVOD_NAME_LEN, t->device);
	svodctl_cell_str(&c[TC_DEVICE], name);
	svodctl_cell_u64(&c[TC_BASE], t->device_base);
	svodctl_cell_u64(&c[TC_CAP], t->capacity);
	svodctl_cell_u64(&c[TC_USED], in_use);
	svodctl_cell_u64(&c[TC_PCT], usable ? (in_use * 1000 + usable / 2) / usable : 0);
	svodctl_cell_u64(&c[TC_FREE], t->free_bytes);
	svodctl_cell_u64(&c[TC_LARGEST], t->largest_free);
	svodctl_cell_u64(&c[TC_SPANS], t->nr_free_spans);
	svodctl_cell_u64(&c[TC_LIVE], t->nr_live);
	svodctl_cell_u64(&c[TC_ALIGN], t->align);
	svodctl_cell_u64(&c[TC_RESV], t->reserved_bytes);
	/* "0xBASE+0xSIZE,...": the declaration's syntax. */
	for (r = 0; r < t->nr_reserved && t->first_reserved + r < nr_regions &&
	     len < sizeof(list); r++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s0x%" PRIx64 "+0x%" PRIx64,
					r ? "," : "",
					(uint64_t)regions[t->first_reserved + r].base,
					(uint64_t)regions[t->first_reserved + r].size);
	svodctl_cell_str(&c[TC_REGIONS], list);
	svodctl_cell_u64(&c[TC_CPU], t->cpu_bytes);
	svodctl_cell_u64(&c[TC_DMA], t->dma_bytes);
	tier_access(c, t->id);
	svodctl_cell_str(&c[TC_USABLE], t->flags & SVOD_TIER_NO_ACCESS ? "no" : "yes");
	svodctl_cell_str(&c[TC_STATE], t->flags & SVOD_TIER_GONE ? "gone" : "ok");
}

/**
 * svodctl_print_tiers_opts() - print the tier listing
 * @fd: descriptor of /dev/svod
 * @o: output options (NULL: the default table)
 *
 * Context: any.
 * Return: 0, -errno, or -EINVAL for an unknown column in @o.
 */
int svodctl_print_tiers_opts(int fd, const struct svodctl_out *o)
{
	static const struct svodctl_out plain;
	struct svodctl_table tbl;
	struct svod_tier_info *tiers;
	struct svod_region *regions;
	uint32_t nr, nr_regions, i;
	struct svodctl_cell *c;
	int ret;

	o = o ? o : &plain;
	svodctl_table_of(&tbl, &svodctl_tiers_listing);
	ret = svodctl_table_init(&tbl, o->columns);
	if (ret)
		return ret;
	ret = svod_query_full(fd, &tiers, &nr, &regions, &nr_regions);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		c = svodctl_table_row(&tbl);
		if (!c) {
			ret = -ENOMEM;
			break;
		}
		tier_row(c, &tiers[i], regions, nr_regions);
	}
	svodctl_table_print(&tbl, o);
	if (!nr && !o->any)
		printf("(no tiers: is a device bound to svod? see svodctl declare)\n");
	free(tiers);
	free(regions);
	return ret;
}

/**
 * svodctl_print_tiers() - print the default tier table
 * @fd: descriptor of /dev/svod
 *
 * Context: any.
 * Return: 0, or -errno.
 */
int svodctl_print_tiers(int fd)
{
	return svodctl_print_tiers_opts(fd, NULL);
}

/**
 * svodctl_cmd_tiers() - `svodctl tiers [--json] [-o COLUMNS] [--raw] [--noheadings]`
 * @argc: argument count
 * @argv: arguments
 *
 * Context: main thread.
 * Return: exit status.
 */
int svodctl_cmd_tiers(int argc, char **argv)
{
	static const struct option longopts[] = { SVODCTL_OUT_LONGOPTS, {} };
	struct svodctl_out o = {};
	struct svodctl_table probe;
	int c, fd, ret;

	while ((c = svodctl_getopt(argc, argv, ":h" SVODCTL_OUT_SHORTOPTS, longopts)) != -1) {
		if (c == 'h')
			return svodctl_help(argv[0], 0);
		if (!svodctl_out_opt(c, optarg, &o))
			return svodctl_help(argv[0], SVODCTL_USAGE);
	}
	if (optind != argc)
		return svodctl_help(argv[0], SVODCTL_USAGE);
	/* A bad -o is a usage error, found before /dev/svod is opened. */
	svodctl_table_of(&probe, &svodctl_tiers_listing);
	if (svodctl_table_init(&probe, o.columns))
		return SVODCTL_USAGE;
	fd = svodctl_session_fd();
	if (fd < 0)
		return svodctl_open_err(argv[0], fd);
	ret = svodctl_print_tiers_opts(fd, &o);
	return ret ? svodctl_err(argv[0], ret, NULL) : 0;
}
