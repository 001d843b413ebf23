#include <mariadb/mysql.h>
#include <mariadb/errmsg.h>
#include <mariadb/mysqld_error.h>

/* mysql_library_init is a macro alias, which Swift does not import. */
static inline int cmariadb_library_init(void) { return mysql_server_init(0, (char **)0, (char **)0); }
