#include <mariadb/mysql.h>
#include <mariadb/errmsg.h>
#include <mariadb/mysqld_error.h>

/* mysql_library_init is a macro alias, which Swift does not import. */
static inline int cmariadb_library_init(void) { return mysql_server_init(0, (char **)0, (char **)0); }

/* MariaDB's progress reports (ALTER TABLE, CREATE INDEX: stage, stages,
   percent of the stage), handed to callback during a long statement;
   mysql_optionsv is variadic, which Swift does not import. Set before
   connecting: the connection then asks the server for them. */
typedef void (*cmariadb_progress_callback)(const MYSQL *, unsigned int stage, unsigned int max_stage,
                                           double progress, const char *info, unsigned int info_length);
static inline int cmariadb_report_progress(MYSQL *mysql, cmariadb_progress_callback callback) {
    return mysql_optionsv(mysql, MYSQL_PROGRESS_CALLBACK, (void *)callback);
}
