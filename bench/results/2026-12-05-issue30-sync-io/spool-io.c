/* spool-io.c MODE - the upload's file sequence 200 times in /tmp/fst: a 62 KB photo and a 9 KB
 * thumbnail written, writeback started, both fsynced, moved to their names (the photo into
 * tree/, plus a hard link), both folders fsynced. MODE 1: named spool files, renamed (as
 * UploadFolder does); MODE 2: O_TMPFILE files, linked in (linkat). Prints ms per upload. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
static double ms(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static char buf[62000];
int main(int argc,char**argv){int mode=atoi(argv[1]);mkdir("/tmp/fst",0755);mkdir("/tmp/fst/tree",0755);
double tot=0;int N=200;
for(int i=0;i<N;i++){char a[64],b[64],c[64],d[64],e[64];
double t0=ms();int fa,fb;
if(mode==2){fa=open("/tmp/fst",O_TMPFILE|O_WRONLY,0644);fb=open("/tmp/fst",O_TMPFILE|O_WRONLY,0644);}
else{sprintf(a,"/tmp/fst/.spool-a%d",i);sprintf(b,"/tmp/fst/.spool-b%d",i);fa=open(a,O_WRONLY|O_CREAT|O_TRUNC,0644);fb=open(b,O_WRONLY|O_CREAT|O_TRUNC,0644);}
write(fa,buf,sizeof buf);write(fb,buf,9000);
sync_file_range(fa,0,0,SYNC_FILE_RANGE_WRITE);sync_file_range(fb,0,0,SYNC_FILE_RANGE_WRITE);
fsync(fa);fsync(fb);
sprintf(c,"/tmp/fst/tree/%d_o.jpg",i);sprintf(d,"/tmp/fst/%d-thumb.jpg",i);sprintf(e,"/tmp/fst/%d.jpg",i);
if(mode==2){char p[64];sprintf(p,"/proc/self/fd/%d",fa);linkat(AT_FDCWD,p,AT_FDCWD,c,AT_SYMLINK_FOLLOW);sprintf(p,"/proc/self/fd/%d",fb);linkat(AT_FDCWD,p,AT_FDCWD,d,AT_SYMLINK_FOLLOW);}
else{rename(a,c);rename(b,d);}
link(c,e);close(fa);close(fb);
int dt=open("/tmp/fst/tree",O_RDONLY);fsync(dt);close(dt);int du=open("/tmp/fst",O_RDONLY);fsync(du);close(du);tot+=ms()-t0;}
printf("mode %d: %.3f ms per upload\n",mode,tot/N);
system("rm -rf /tmp/fst");}
