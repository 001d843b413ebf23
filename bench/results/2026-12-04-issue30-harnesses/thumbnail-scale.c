#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "CJpegScale.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(int argc,char**argv){
  int n=atoi(argv[2]); double best=1e9, bestd=1e9; int sw=0;
  for(int rep=0;rep<5;rep++){ double td=0, t0=now();
    for(int i=0;i<n;i++){ gdImagePtr im=NULL; ir_jpeg_info info; char msg[256];
      double a=now();
      if(ir_jpeg_decode_scaled(argv[1],180,0,0,&im,&info,msg,sizeof msg)!=0){printf("err %s\n",msg);return 1;}
      td+=now()-a; sw=info.scaled_width;
      int w=gdImageSX(im),h=gdImageSY(im),c=w<h?w:h;
      gdImagePtr t=ir_resample_triangle(im,(w-c)/2,(h-c)/2,c,c,180,180);
      int sz; void *j=gdImageJpegPtr(t,&sz,85); gdFree(j);
      gdImageDestroy(t); gdImageDestroy(im);}
    double tt=(now()-t0)/n; if(tt<best)best=tt; if(td/n<bestd)bestd=td/n; }
  printf("%s: scaled width %d, decode %.3f ms, decode+resample+encode %.3f ms\n",argv[1],sw,bestd,best);
}
