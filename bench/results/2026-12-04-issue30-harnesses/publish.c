#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static char photo[62000], thumb[6000];
static void wr(const char *p, char *b, size_t n){int fd=open(p,O_WRONLY|O_CREAT|O_TRUNC,0600);write(fd,b,n);close(fd);}
static void syncp(const char *p){int fd=open(p,O_RDONLY);fsync(fd);close(fd);}
int main(int argc,char**argv){
  const char *dir=argv[1]; int n=atoi(argv[2]); int mode=atoi(argv[3]);
  char tree[256]; snprintf(tree,256,"%s/tree",dir); mkdir(tree,0755);
  double t0=now();
  for(int i=0;i<n;i++){
    char ps[256],ts[256],pf[256],tf[256],lf[256];
    snprintf(ps,256,"%s/.spool-p%d",dir,i); snprintf(ts,256,"%s/.spool-t%d",dir,i);
    snprintf(pf,256,"%s/%d_o.jpg",tree,i); snprintf(tf,256,"%s/%d-thumb.jpg",dir,i); snprintf(lf,256,"%s/%d.jpg",dir,i);
    wr(ps,photo,sizeof photo);
    if(mode==0){ syncp(ps); wr(ts,thumb,sizeof thumb); syncp(ts); rename(ts,tf); rename(ps,pf); link(pf,lf); syncp(tree); syncp(dir); }
    else { wr(ts,thumb,sizeof thumb); int a=open(ps,O_RDONLY), b=open(ts,O_RDONLY); sync_file_range(a,0,0,SYNC_FILE_RANGE_WRITE); sync_file_range(b,0,0,SYNC_FILE_RANGE_WRITE); fsync(a); fsync(b); close(a); close(b);
      rename(ts,tf); rename(ps,pf); link(pf,lf); int c=open(tree,O_RDONLY), d=open(dir,O_RDONLY); fsync(c); fsync(d); close(c); close(d); }
  }
  printf("mode %d: %.2f ms per publish\n", mode, (now()-t0)/n);
}
