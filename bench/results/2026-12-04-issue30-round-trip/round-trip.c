// Cost of one round trip kind against MariaDB: wall time per call and mariadbd CPU per call.
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static double dbcpu(int pid){char p[64];sprintf(p,"/proc/%d/stat",pid);FILE*f=fopen(p,"r");char b[4096];fread(b,1,sizeof b,f);fclose(f);
 char*s=strrchr(b,')')+2;long ut,st;int i;char*tok=strtok(s," ");for(i=0;i<11;i++)tok=strtok(NULL," ");ut=atol(tok);tok=strtok(NULL," ");st=atol(tok);return (ut+st)/100.0;}
int main(int argc,char**argv){
 int pid=atoi(argv[1]); const char*sql=argv[2]; int n=atoi(argv[3]); int mode=atoi(argv[4]);
 MYSQL*m=mysql_init(NULL);
 if(!mysql_real_connect(m,NULL,"root",NULL,"iReport",0,"/tmp/ireporter/mariadb/mysqld.sock",0)){fprintf(stderr,"%s\n",mysql_error(m));return 1;}
 MYSQL_STMT*keep=NULL;
 if(mode==1){keep=mysql_stmt_init(m); if(mysql_stmt_prepare(keep,sql,strlen(sql))){fprintf(stderr,"prep %s\n",mysql_stmt_error(keep));return 1;}}
 double c0=dbcpu(pid),t0=now(); int fails=0;
 for(int i=0;i<n;i++){
  if(mode==0){MYSQL_STMT*s=mysql_stmt_init(m); if(mysql_stmt_prepare(s,sql,strlen(sql)))fails++; mysql_stmt_close(s);}
  else if(mode==1){MYSQL_BIND b; long long v=3; memset(&b,0,sizeof b); b.buffer_type=MYSQL_TYPE_LONGLONG; b.buffer=&v; mysql_stmt_bind_param(keep,&b); if(mysql_stmt_execute(keep))fails++; mysql_stmt_store_result(keep); mysql_stmt_free_result(keep);}
  else { if(mysql_query(m,sql))fails++; else { MYSQL_RES*r=mysql_store_result(m); if(r)mysql_free_result(r);} }
 }
 double t1=now(),c1=dbcpu(pid);
 printf("%-70.70s mode %d: %.1f us wall, %.1f us mariadbd cpu per call (%d failed)\n",sql,mode,(t1-t0)/n*1e6,(c1-c0)/n*1e6,fails);
 return 0;}
