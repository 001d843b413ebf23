/* dir-sync-shared.c P N EVERY - P processes each doing N uploads' file sequence at once in
 * /tmp/fc, the two folders fsynced after every EVERY-th upload only (1: as shipped; 4: what a
 * group commit shared by 4 uploads could at best save). Prints uploads/s and CPU per upload. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/resource.h>
static double ms(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static char buf[62000];
/* P processes, N uploads each; dirsync: 1 = sync both folders per upload, k>1 = once per k uploads (a group commit's best case) */
int main(int argc,char**argv){int P=atoi(argv[1]),N=atoi(argv[2]),every=atoi(argv[3]);
mkdir("/tmp/fc",0755);mkdir("/tmp/fc/tree",0755);double t0=ms();
for(int p=0;p<P;p++) if(fork()==0){
 for(int i=0;i<N;i++){char a[80],b[80],c[80],d[80],e[80];
  sprintf(a,"/tmp/fc/.spool-a%d-%d",p,i);sprintf(b,"/tmp/fc/.spool-b%d-%d",p,i);
  int fa=open(a,O_WRONLY|O_CREAT|O_TRUNC,0644),fb=open(b,O_WRONLY|O_CREAT|O_TRUNC,0644);
  write(fa,buf,sizeof buf);write(fb,buf,7000);
  sync_file_range(fa,0,0,SYNC_FILE_RANGE_WRITE);sync_file_range(fb,0,0,SYNC_FILE_RANGE_WRITE);
  fsync(fa);fsync(fb);close(fa);close(fb);
  sprintf(c,"/tmp/fc/tree/%d_%d_o.jpg",p,i);sprintf(d,"/tmp/fc/%d_%d-thumb.jpg",p,i);sprintf(e,"/tmp/fc/%d_%d.jpg",p,i);
  rename(a,c);rename(b,d);link(c,e);
  if(i%every==0){int dt=open("/tmp/fc/tree",O_RDONLY);fsync(dt);close(dt);int du=open("/tmp/fc",O_RDONLY);fsync(du);close(du);}}
 _exit(0);}
for(int p=0;p<P;p++)wait(NULL);
struct rusage ru;getrusage(RUSAGE_CHILDREN,&ru);
double cpu=(ru.ru_utime.tv_sec+ru.ru_stime.tv_sec)*1e3+(ru.ru_utime.tv_usec+ru.ru_stime.tv_usec)/1e3;
printf("P=%d every=%d: %.0f uploads/s, children CPU %.3f ms per upload\n",P,every,P*N/((ms()-t0)/1e3),cpu/(P*N));
system("rm -rf /tmp/fc");}
