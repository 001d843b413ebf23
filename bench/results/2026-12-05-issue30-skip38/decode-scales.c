#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <jpeglib.h>
static double ms(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(int argc,char**argv){
 FILE*f=fopen(argv[1],"rb");fseek(f,0,SEEK_END);long n=ftell(f);rewind(f);unsigned char*b=malloc(n);fread(b,1,n,f);fclose(f);
 int num=atoi(argv[2]),fancy=atoi(argv[3]),ifast=atoi(argv[4]),N=atoi(argv[5]);
 unsigned char*row=malloc(4*8000);double t0=ms();unsigned w=0,h=0;
 for(int i=0;i<N;i++){struct jpeg_decompress_struct c;struct jpeg_error_mgr e;c.err=jpeg_std_error(&e);jpeg_create_decompress(&c);
  jpeg_mem_src(&c,b,n);jpeg_read_header(&c,TRUE);c.out_color_space=JCS_EXT_BGRX;c.scale_num=num;c.scale_denom=8;
  c.do_fancy_upsampling=fancy;if(ifast)c.dct_method=JDCT_IFAST;jpeg_start_decompress(&c);w=c.output_width;h=c.output_height;
  while(c.output_scanline<c.output_height){JSAMPROW r=row;jpeg_read_scanlines(&c,&r,1);}
  jpeg_finish_decompress(&c);jpeg_destroy_decompress(&c);}
 printf("scale %d/8 fancy %d ifast %d: %ux%u %.3f ms/decode\n",num,fancy,ifast,w,h,(ms()-t0)/N);}
