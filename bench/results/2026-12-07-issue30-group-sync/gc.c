/* gc.c MODE P N BURN_US: P processes x N uploads' file sequence in /tmp/gc<pid>, each
 * after BURN_US of CPU (the decode's stand-in). MODE 1: as shipped (both spools'
 * writeback started, each fsynced, renamed, tree folder and upload folder fsynced).
 * MODE 2: group commit: spools written, one shared syncfs round, renames, one more
 * shared round (a round started after the caller's writes covers them). Prints
 * uploads/s and the machine's busy CPU per upload (/proc/stat). Mode 0: no sync (the ceiling).
 * MODE 3: mode 1 with the names made first: renames and link, then each file fsynced, then
 * the folders. MODE 4: as shipped on the reference's schema (no tree: the photo and its
 * thumbnail each fsynced, both renamed, the upload folder fsynced). MODE 5: mode 4 with the
 * renames first (modes 3-5: ../2026-12-07-issue30-sync-order).
 * The folder is left for the caller to delete (README.md). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/file.h>
static double ms(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static double cpu_ms(){struct timespec t;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static char buf[62000];
struct shared { uint64_t started, completed, rounds; };
static struct shared *sh; static int lockfd, dirfd_;
static void group_sync(void){
  uint64_t target = __atomic_load_n(&sh->started, __ATOMIC_ACQUIRE) + 1;
  flock(lockfd, LOCK_EX);
  if (__atomic_load_n(&sh->completed, __ATOMIC_ACQUIRE) < target) {
    uint64_t r = ++sh->started; sh->rounds++;
    syncfs(dirfd_);
    __atomic_store_n(&sh->completed, r, __ATOMIC_RELEASE);
  }
  flock(lockfd, LOCK_UN);
}
static void busy(long tot[2]){FILE*f=fopen("/proc/stat","r");long u,n,s,i,w,q,sq,st;fscanf(f,"cpu %ld %ld %ld %ld %ld %ld %ld %ld",&u,&n,&s,&i,&w,&q,&sq,&st);fclose(f);tot[0]=u+n+s+q+sq+st;tot[1]=i+w;}
int main(int argc,char**argv){int mode=atoi(argv[1]),P=atoi(argv[2]),N=atoi(argv[3]);double burn=atof(argv[4])/1000;
char top[64];sprintf(top,"/tmp/gc%d",getpid());mkdir(top,0755);chdir(top);mkdir("tree",0755);
sh=mmap(0,4096,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
long b0[2],b1[2];busy(b0);double t0=ms();
for(int p=0;p<P;p++) if(fork()==0){
 lockfd=open(".lock",O_RDWR|O_CREAT,0644);dirfd_=open(".",O_RDONLY);
 for(int i=0;i<N;i++){char a[80],b[80],c[80],d[80],e[80];
  double c0=cpu_ms(); volatile double x=0; while(cpu_ms()-c0<burn) for(int k=0;k<1000;k++) x+=k;
  sprintf(a,".spool-a%d-%d",p,i);sprintf(b,".spool-b%d-%d",p,i);
  int fa=open(a,O_WRONLY|O_CREAT|O_TRUNC,0644),fb=open(b,O_WRONLY|O_CREAT|O_TRUNC,0644);
  write(fa,buf,sizeof buf);write(fb,buf,7000);
  sprintf(c,"tree/%d_%d_o.jpg",p,i);sprintf(d,"%d_%d-thumb.jpg",p,i);sprintf(e,"%d_%d.jpg",p,i);
  if(mode==0){close(fa);close(fb);rename(b,d);rename(a,c);link(c,e);}
  else if(mode==1){
   sync_file_range(fa,0,0,SYNC_FILE_RANGE_WRITE);sync_file_range(fb,0,0,SYNC_FILE_RANGE_WRITE);
   fsync(fa);fsync(fb);close(fa);close(fb);
   rename(b,d);rename(a,c);link(c,e);
   int dt=open("tree",O_RDONLY);fsync(dt);close(dt);int du=open(".",O_RDONLY);fsync(du);close(du);
  } else if(mode==3){ /* names first, then each file fsynced, then the folders */
   sync_file_range(fa,0,0,SYNC_FILE_RANGE_WRITE);sync_file_range(fb,0,0,SYNC_FILE_RANGE_WRITE);
   rename(b,d);rename(a,c);link(c,e);
   fsync(fa);fsync(fb);close(fa);close(fb);
   int dt=open("tree",O_RDONLY);fsync(dt);close(dt);int du=open(".",O_RDONLY);fsync(du);close(du);
  } else if(mode==4){ /* as shipped, no tree (the reference schema) */
   sync_file_range(fa,0,0,SYNC_FILE_RANGE_WRITE);sync_file_range(fb,0,0,SYNC_FILE_RANGE_WRITE);
   fsync(fa);fsync(fb);close(fa);close(fb);
   rename(b,d);rename(a,e);
   int du=open(".",O_RDONLY);fsync(du);close(du);
  } else if(mode==5){ /* names first, no tree */
   sync_file_range(fa,0,0,SYNC_FILE_RANGE_WRITE);sync_file_range(fb,0,0,SYNC_FILE_RANGE_WRITE);
   rename(b,d);rename(a,e);
   fsync(fa);fsync(fb);close(fa);close(fb);
   int du=open(".",O_RDONLY);fsync(du);close(du);
  } else {
   close(fa);close(fb);group_sync();
   rename(b,d);rename(a,c);link(c,e);group_sync();
  }}
 _exit(0);}
for(int p=0;p<P;p++)wait(NULL);
double wall=ms()-t0;busy(b1);long hz=sysconf(_SC_CLK_TCK);
double busyms=(b1[0]-b0[0])*1000.0/hz;
printf("mode=%d P=%d burn=%.1fms: %.0f uploads/s, machine busy %.3f ms per upload, idle %.2f cores, sync rounds per upload %.2f\n",
 mode,P,burn,P*N/(wall/1e3),busyms/(P*N),(b1[1]-b0[1])*1000.0/hz/wall,(double)sh->rounds/(P*N));
}
