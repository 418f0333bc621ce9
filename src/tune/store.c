/* The tuning store: one SQLite table of the best broadcast tree known per (locations of the
 * ranks, root, message size class), shared by every program and run of the same user. Each
 * access opens the file, waits for other writers (busy timeout) and closes it again: it is
 * used at a search's end and at MPI_Finalize, never on a broadcast's path. */
#include "tune.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BUSY_MS 10000

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS bcast_tree ("
    " locations TEXT NOT NULL, root INTEGER NOT NULL, size_class INTEGER NOT NULL,"
    " ranks INTEGER NOT NULL, tree TEXT NOT NULL, time_us REAL NOT NULL,"
    " converged INTEGER NOT NULL, trials INTEGER NOT NULL, runs INTEGER NOT NULL,"
    " updated TEXT NOT NULL, PRIMARY KEY (locations, root, size_class))";

/* mkdir -p of the directory part of path */
static void make_dirs(const char *path) {
    char buf[1024];
    size_t len = strlen(path);
    if (len >= sizeof(buf)) return;
    memcpy(buf, path, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0700) && errno != EEXIST) return;
        *p = '/';
    }
}

const char *co_tune_db_path(const char *set, char *buf, size_t len) {
    if (!strcmp(set, "none")) return NULL;
    if (set[0]) {
        snprintf(buf, len, "%s", set);
        return buf;
    }
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (cache && cache[0] == '/')
        snprintf(buf, len, "%s/cohort/tune.db", cache);
    else if (home && home[0])
        snprintf(buf, len, "%s/.cache/cohort/tune.db", home);
    else
        return NULL;
    return buf;
}

static sqlite3 *db_open(const char *path, int create, char *err, size_t errlen) {
    sqlite3 *db = NULL;
    if (create) make_dirs(path);
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &db, flags, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, BUSY_MS);
        rc = sqlite3_exec(db, schema, NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "tuning store %s: %s", path,
                 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

int co_tune_store_get(const char *path, const char *key, int root, int cls, co_tune_row *row,
                      char *err, size_t errlen) {
    struct stat sb;
    if (stat(path, &sb) != 0) return 0; /* nothing remembered yet */
    sqlite3 *db = db_open(path, 0, err, errlen);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int found = -1;
    if (sqlite3_prepare_v2(db,
                           "SELECT ranks, tree, time_us, converged, trials, runs FROM bcast_tree"
                           " WHERE locations = ?1 AND root = ?2 AND size_class = ?3",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_bind_int(st, 2, root) == SQLITE_OK && sqlite3_bind_int(st, 3, cls) == SQLITE_OK) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            const unsigned char *tree = sqlite3_column_text(st, 1);
            *row = (co_tune_row){key,
                                 root,
                                 cls,
                                 sqlite3_column_int(st, 0),
                                 strdup(tree ? (const char *)tree : ""),
                                 sqlite3_column_double(st, 2),
                                 sqlite3_column_int(st, 3),
                                 (long)sqlite3_column_int64(st, 4),
                                 (long)sqlite3_column_int64(st, 5)};
            found = row->tree ? 1 : -1;
        } else if (rc == SQLITE_DONE) {
            found = 0;
        }
    }
    if (found < 0) snprintf(err, errlen, "tuning store %s: %s", path, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return found;
}

int co_tune_store_put(const char *path, const co_tune_row *rows, int m, char *err, size_t errlen) {
    sqlite3 *db = db_open(path, 1, err, errlen);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK &&
             sqlite3_prepare_v2(db,
                                "INSERT OR REPLACE INTO bcast_tree VALUES"
                                " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, datetime('now'))",
                                -1, &st, NULL) == SQLITE_OK;
    for (int i = 0; ok && i < m; i++) {
        const co_tune_row *r = &rows[i];
        ok = sqlite3_bind_text(st, 1, r->key, -1, SQLITE_STATIC) == SQLITE_OK &&
             sqlite3_bind_int(st, 2, r->root) == SQLITE_OK &&
             sqlite3_bind_int(st, 3, r->cls) == SQLITE_OK &&
             sqlite3_bind_int(st, 4, r->n) == SQLITE_OK &&
             sqlite3_bind_text(st, 5, r->tree, -1, SQLITE_STATIC) == SQLITE_OK &&
             sqlite3_bind_double(st, 6, r->time_us) == SQLITE_OK &&
             sqlite3_bind_int(st, 7, r->converged) == SQLITE_OK &&
             sqlite3_bind_int64(st, 8, r->trials) == SQLITE_OK &&
             sqlite3_bind_int64(st, 9, r->runs) == SQLITE_OK && sqlite3_step(st) == SQLITE_DONE &&
             sqlite3_reset(st) == SQLITE_OK;
    }
    sqlite3_finalize(st);
    ok = ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    if (!ok) {
        snprintf(err, errlen, "tuning store %s: %s", path, sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_close(db);
    return ok ? 0 : -1;
}

/* the sizes of class cls, in bytes */
static const char *size_range(int cls, char *buf, size_t len) {
    if (cls == 0) return "0 bytes";
    unsigned long long lo = 1ull << (cls - 1);
    snprintf(buf, len, "%llu-%llu bytes", lo, 2 * lo - 1);
    return buf;
}

int co_tune_list(const char *path, FILE *out, FILE *errf) {
    char err[512] = "";
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(out, "tuning store %s: empty (no broadcast has been tuned)\n", path);
        return 0;
    }
    sqlite3 *db = db_open(path, 0, err, sizeof(err));
    if (!db) {
        fprintf(errf, "cohort: %s\n", err);
        return 1;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT locations, root, size_class, ranks, tree, time_us,"
                                " converged, trials, runs, updated FROM bcast_tree"
                                " ORDER BY locations, root, size_class",
                                -1, &st, NULL);
    fprintf(out, "tuning store %s\n", path);
    int rows = 0;
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        char sz[64];
        fprintf(out,
                "locations %s\n  root %d, messages of %s, %d ranks: %s after %lld timed calls "
                "(%lld run%s, %s)\n  best %.1f us, parents: %s\n",
                sqlite3_column_text(st, 0), sqlite3_column_int(st, 1),
                size_range(sqlite3_column_int(st, 2), sz, sizeof(sz)), sqlite3_column_int(st, 3),
                sqlite3_column_int(st, 6) ? "found" : "still searching",
                (long long)sqlite3_column_int64(st, 7), (long long)sqlite3_column_int64(st, 8),
                sqlite3_column_int64(st, 8) == 1 ? "" : "s", sqlite3_column_text(st, 9),
                sqlite3_column_double(st, 5), sqlite3_column_text(st, 4));
        rows++;
        rc = SQLITE_OK;
    }
    int bad = rc != SQLITE_DONE && rc != SQLITE_OK;
    if (bad)
        fprintf(errf, "cohort: tuning store %s: %s\n", path, sqlite3_errmsg(db));
    else
        fprintf(out, "%d entr%s\n", rows, rows == 1 ? "y" : "ies");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return bad;
}

int co_tune_forget(const char *path, FILE *out, FILE *errf) {
    char err[512] = "";
    struct stat sb;
    if (stat(path, &sb) != 0) return 0;
    sqlite3 *db = db_open(path, 0, err, sizeof(err));
    if (!db || sqlite3_exec(db, "DELETE FROM bcast_tree", NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(errf, "cohort: %s\n", db ? sqlite3_errmsg(db) : err);
        sqlite3_close(db);
        return 1;
    }
    fprintf(out, "tuning store %s: emptied\n", path);
    sqlite3_close(db);
    return 0;
}
