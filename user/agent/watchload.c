// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The agent's reloads and watch lists, on a thread of their own: reading a
 * list of a million lines takes most of a second, building its table a
 * fifth of a second an interface, a country list longer, and the loop that
 * turns windows and intervals every 10 ms must not wait for either. The
 * thread re-reads the configuration at SIGHUP (the settings are swapped in
 * under the agent's lock, as the loop's turns are) and builds the tables.
 * One thing at a time; a SIGHUP during a load asks for another reload, and
 * only the newest list asked for is loaded next. */
#include <pthread.h>
#include <stdlib.h>
#include "agent_state.h"
#include "base/common.h"
#include "instance/watch.h"

static struct {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool started, quit, pending, reload;
	struct agent *ag;
	void (*reconfigure)(void);
	/* the newest request: the list (owned; NULL: clear the tables loaded
	 * before, when there were), its path for the log */
	struct bt_watch_list *list;
	const char *path;
	bool clear;
} wl = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

void bt_watch_list_drop(struct bt_watch_list *l)
{
	if (l)
		bt_watch_list_free(l);
	free(l);
}

/* Every interface's table from l (NULL: an empty list). */
static void load_all(struct agent *ag, const struct bt_watch_list *l, const char *path)
{
	static const struct bt_watch_list none;

	for (int i = 0; i < ag->n; i++) {
		struct bt_watch_loaded w;

		if (bt_watch_load(&ag->ifs[i].inst, l ? l : &none, BT_WATCH_CHECK_BITS, &w))
			bt_log(BT_LOG_ERR, "%s: the watch list %s could not be loaded",
			       ag->ifs[i].name, path ? path : "(cleared)");
		else
			bt_log(BT_LOG_INFO, "%s: watch list %s: %zu keys in %u classes",
			       ag->ifs[i].name, path ? path : "cleared", w.keys, w.classes);
	}
}

static void *loader(void *arg)
{
	pthread_mutex_lock(&wl.mu);
	for (;;) {
		struct bt_watch_list *l;
		const char *path;
		bool clear;

		while (!wl.pending && !wl.reload && !wl.quit)
			pthread_cond_wait(&wl.cv, &wl.mu);
		if (wl.quit)
			break;	/* stopping: what was asked for and not begun is dropped */
		if (wl.reload) {
			wl.reload = false;
			pthread_mutex_unlock(&wl.mu);
			wl.reconfigure();	/* asks for its list's load: next turn */
			pthread_mutex_lock(&wl.mu);
			continue;
		}
		l = wl.list;
		path = wl.path;
		clear = wl.clear;
		wl.list = NULL;
		wl.pending = false;
		pthread_mutex_unlock(&wl.mu);
		if (l || clear)
			load_all(wl.ag, l, path);
		bt_watch_list_drop(l);
		pthread_mutex_lock(&wl.mu);
	}
	pthread_mutex_unlock(&wl.mu);
	return NULL;
}

int bt_watch_loader_start(struct agent *ag, void (*reconfigure)(void))
{
	wl.ag = ag;
	wl.reconfigure = reconfigure;
	wl.quit = false;
	if (pthread_create(&wl.th, NULL, loader, NULL))
		return -1;
	wl.started = true;
	return 0;
}

void bt_watch_loader_request(struct bt_watch_list *l, const char *path, bool clear)
{
	pthread_mutex_lock(&wl.mu);
	bt_watch_list_drop(wl.list);	/* asked for and not begun: the newer wins */
	wl.list = l;
	wl.path = path;
	wl.clear = clear;
	wl.pending = true;
	pthread_cond_broadcast(&wl.cv);
	pthread_mutex_unlock(&wl.mu);
}

void bt_watch_loader_reload(void)
{
	pthread_mutex_lock(&wl.mu);
	wl.reload = true;
	pthread_cond_broadcast(&wl.cv);
	pthread_mutex_unlock(&wl.mu);
}

void bt_watch_loader_stop(void)
{
	if (!wl.started)
		return;
	pthread_mutex_lock(&wl.mu);
	wl.quit = true;
	pthread_cond_broadcast(&wl.cv);
	pthread_mutex_unlock(&wl.mu);
	pthread_join(wl.th, NULL);	/* after the load under way, if any */
	wl.started = false;
	bt_watch_list_drop(wl.list);
	wl.list = NULL;
}
