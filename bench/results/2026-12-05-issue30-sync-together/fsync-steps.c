#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
static double ms(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static char buf[120000];
int main(int argc,char**argv){int mode=atoi(argv[1]);mkdir("/tmp/fst",0755);mkdir("/tmp/fst/tree",0755);
double tot[6]={0};int N=200;
for(int i=0;i<N;i++){char a[64],b[64],c[64],d[64];sprintf(a,"/tmp/fst/.spool-a%d",i);sprintf(b,"/tmp/fst/.spool-b%d",i);
double t0=ms();int fa=open(a,O_WRONLY|O_CREAT|O_TRUNC,0644);write(fa,buf,sizeof buf);
int fb=open(b,O_WRONLY|O_CREAT|O_TRUNC,0644);write(fb,buf,9000);
if(mode==1){sync_file_range(fa,0,0,SYNC_FILE_RANGE_WRITE);sync_file_range(fb,0,0,SYNC_FILE_RANGE_WRITE);}
double t1=ms();fsync(fa);double t2=ms();fsync(fb);double t3=ms();close(fa);close(fb);
sprintf(c,"/tmp/fst/tree/%d_o.jpg",i);sprintf(d,"/tmp/fst/%d-thumb.jpg",i);rename(a,c);rename(b,d);
int dt=open("/tmp/fst/tree",O_RDONLY);double t4=ms();fsync(dt);double t5=ms();close(dt);int du=open("/tmp/fst",O_RDONLY);fsync(du);double t6=ms();close(du);
tot[0]+=t1-t0;tot[1]+=t2-t1;tot[2]+=t3-t2;tot[3]+=t5-t4;tot[4]+=t6-t5;}
printf("mode %d per upload ms: write %.3f fsync-photo %.3f fsync-thumb %.3f fsync-tree %.3f fsync-dir %.3f\n",mode,tot[0]/N,tot[1]/N,tot[2]/N,tot[3]/N,tot[4]/N);
system("rm -rf /tmp/fst");}
