/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod open files: the unit of isolation. Each open file of /dev/svod has its
 * own handle table and its own usage per tier; an fd shared by fork() or
 * SCM_RIGHTS shares both.
 */
#ifndef SVOD_FILE_H
#define SVOD_FILE_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/types.h>

#include "async.h"
#include "core/handle.h"

struct svod_account;
struct svod_allocation;
struct svod_dev_tier;
struct file;

/**
 * struct svod_file - one open file of /dev/svod
 * @filp: the file; its f_cred, the opener's credentials, decide which
 *	tiers it may use (svod_dev_tier_may_use())
 * @lock: protects @handles
 * @handles: the file's handle table; objects are struct svod_hold
 * @acct: what the file is charged, per tier (alloc.h)
 * @node: entry in the list of open files (svod_files_lock)
 * @client_id: unique number of this open file
 * @pid: thread group that opened the file
 * @comm: command name of the opener
 * @async: the file's asynchronous transfers (async.c)
 */
struct svod_file {
	struct file *filp;
	/* Protects @handles. */
	struct mutex lock;
	struct svod_handle_table handles;
	struct svod_account *acct;
	struct list_head node;
	u64 client_id;
	struct pid *pid;
	char comm[TASK_COMM_LEN];
	struct svod_async async;
};

struct inode;
struct seq_file;

extern struct mutex svod_files_lock;
extern struct list_head svod_files;

int svod_open(struct inode *inode, struct file *filp);
int svod_release(struct inode *inode, struct file *filp);
void svod_show_fdinfo(struct seq_file *m, struct file *filp);
void svod_files_exit(void);

#endif /* SVOD_FILE_H */
