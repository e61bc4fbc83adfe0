/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svodctl: the command-line tool of svod. Each subcommand is a function
 * int svodctl_cmd_NAME(int argc, char **argv) with argv[0] the subcommand
 * name; it returns the process exit status (0 ok, 1 failure, 2 usage).
 */
#ifndef SVODCTL_H
#define SVODCTL_H

#include <stdint.h>

#include "libsvod.h"

#define SVODCTL_USAGE	2

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

int svodctl_cmd_tiers(int argc, char **argv);
int svodctl_cmd_top(int argc, char **argv);
int svodctl_cmd_alloc(int argc, char **argv);
int svodctl_cmd_free(int argc, char **argv);
int svodctl_cmd_resolve(int argc, char **argv);
int svodctl_cmd_stage(int argc, char **argv);
int svodctl_cmd_read(int argc, char **argv);
int svodctl_cmd_declare(int argc, char **argv);
int svodctl_cmd_run(int argc, char **argv);
int svodctl_cmd_demo(int argc, char **argv);
int svodctl_cmd_plan(int argc, char **argv);
int svodctl_cmd_bench(int argc, char **argv);

int svodctl_err(const char *cmd, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int svodctl_wants_help(int argc, char **argv);
int svodctl_help(const char *cmd, int status);
int svodctl_parse_u64(const char *s, uint64_t *val);
int svodctl_parse_tier(int fd, const char *s, uint32_t *id);
int svodctl_session_fd(void);
void svodctl_size(uint64_t bytes, char *buf, unsigned int len);
int svodctl_print_tiers(int fd);

#endif /* SVODCTL_H */
