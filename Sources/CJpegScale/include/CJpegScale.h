/*
 * CJpegScale: JPEG file decoding with libjpeg-turbo for the thumbnailer.
 *
 * libjpeg reports errors with longjmp, which Swift cannot express, so the
 * whole decode lives here and Swift only sees status codes, a message and, on
 * success, a gd truecolor image.
 *
 * Every libjpeg *warning* (corrupt data, premature end of file, ...) is an
 * error here: an upload has to decode completely and cleanly.
 *
 * All functions are reentrant: no global state, one decoder per call, so they
 * can be called from any number of threads at once.
 */
#ifndef CJPEGSCALE_H
#define CJPEGSCALE_H

#include <stddef.h>
#include <stdio.h>
#include <gd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes returned by the ir_jpeg_* functions. */
typedef enum {
    IR_JPEG_OK = 0,
    IR_JPEG_ERR_IO = 1,              /* the file could not be opened or read (errno text in msg) */
    IR_JPEG_ERR_NOT_JPEG = 2,        /* empty, or does not start with a JPEG SOI marker */
    IR_JPEG_ERR_CORRUPT = 3,         /* libjpeg error or warning: truncated / corrupt data */
    IR_JPEG_ERR_TOO_MANY_PIXELS = 4, /* width * height > max_pixels (checked before decoding) */
    IR_JPEG_ERR_UNSUPPORTED = 5,     /* valid JPEG this decoder does not handle (12-bit, odd colour space, ...) */
    IR_JPEG_ERR_NO_MEMORY = 6,       /* an allocation failed */
    IR_JPEG_ERR_TOO_MUCH_MEMORY = 7  /* a progressive / multi-scan file needs more than max_decode_bytes
                                        for its coefficients (checked before decoding) */
} ir_jpeg_status;

/* Colour space of the JPEG data (a subset of libjpeg's J_COLOR_SPACE). */
typedef enum {
    IR_JPEG_CS_UNKNOWN = 0,
    IR_JPEG_CS_GRAYSCALE = 1,
    IR_JPEG_CS_RGB = 2,
    IR_JPEG_CS_YCBCR = 3,
    IR_JPEG_CS_CMYK = 4,
    IR_JPEG_CS_YCCK = 5
} ir_jpeg_colorspace;

/* What the header says. Fields the decoder did not reach stay 0. */
typedef struct {
    int width;          /* stored (unrotated) size, pixels */
    int height;
    int components;     /* 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK */
    int colorspace;     /* ir_jpeg_colorspace */
    int orientation;    /* EXIF Orientation 1..8 (1 when absent or invalid) */
    int progressive;    /* 1 when progressive (multi-scan) */
    int scaled_width;   /* ir_jpeg_decode_scaled only: size of the decoded image */
    int scaled_height;
    int scale_num;      /* ir_jpeg_decode_scaled only: decoded at scale_num / 8 */
    int multi_scan;     /* 1 when the decoder must keep every coefficient (progressive,
                           or components in separate scans) */
    long long coefficient_bytes; /* what that buffer takes (0 for a single-scan file) */
} ir_jpeg_info;

/* The recommended size of the message buffer (libjpeg's JMSG_LENGTH_MAX is 200). */
#define IR_JPEG_MSG_LEN 256

/*
 * Reads the header (markers up to the first scan) and the EXIF orientation.
 * Does not decode any image data, so a valid header followed by garbage is
 * not detected here. `msg` (may be NULL) receives a NUL-terminated message on
 * failure, truncated to msg_len.
 */
ir_jpeg_status ir_jpeg_read_header(const char *path, ir_jpeg_info *info,
                        char *msg, size_t msg_len);

/*
 * Decodes the whole file into a new gd truecolor image (opaque, alpha 0),
 * using libjpeg's DCT scaling M/8 with the smallest M in 1, 2, 4..8 whose
 * output keeps the short side >= min_short_side (M = 8 when the image is
 * smaller than that: no upscaling here). 3/8 is passed over: 4/8 decodes
 * faster (SIMD), for more pixels.
 *
 * Refuses (IR_JPEG_ERR_TOO_MANY_PIXELS) before allocating anything when
 * width * height > max_pixels (max_pixels <= 0: no limit), and
 * (IR_JPEG_ERR_TOO_MUCH_MEMORY) when a progressive or multi-scan file's
 * whole-image coefficient buffer (64 coefficients of 2 bytes per 8x8 block of
 * each component, as libjpeg allocates it) exceeds max_decode_bytes; libjpeg's
 * own max_memory_to_use is set to that figure too, so nothing it allocates
 * for the image can pass it (max_decode_bytes <= 0: no limit).
 * Arithmetic-coded files (SOF9-SOF11) are refused as unsupported: no camera
 * writes them, and the rest of the pipeline reads Huffman-coded files only.
 * Every scanline is
 * decoded and jpeg_finish_decompress is called, so the entire entropy-coded
 * data is checked; any libjpeg warning fails the call, unless
 * `tolerate_warnings` (a photo already stored: decoded as PHP's GD decodes it,
 * with libjpeg's made-up data where the file is broken).
 * Grayscale, YCbCr, RGB, CMYK and YCCK (Adobe, inverted or not) are handled.
 *
 * On success *out is a new image the caller frees with gdImageDestroy; on
 * failure *out is NULL. `info` (may be NULL) is filled as far as the header
 * was read, also on failure (e.g. the dimensions for TOO_MANY_PIXELS).
 */
ir_jpeg_status ir_jpeg_decode_scaled(const char *path, int min_short_side, long long max_pixels,
                          long long max_decode_bytes, int tolerate_warnings, gdImagePtr *out,
                          ir_jpeg_info *info, char *msg, size_t msg_len);

/* The same two calls on an already open stream, read from its current position. */
ir_jpeg_status ir_jpeg_read_header_file(FILE *fp, ir_jpeg_info *info, char *msg, size_t msg_len);
ir_jpeg_status ir_jpeg_decode_scaled_file(FILE *fp, int min_short_side, long long max_pixels,
                               long long max_decode_bytes, int tolerate_warnings, gdImagePtr *out,
                               ir_jpeg_info *info, char *msg, size_t msg_len);

/*
 * Parses an EXIF APP1 payload (starting with "Exif\0\0") and returns the
 * IFD0 Orientation (1..8), or 1 when absent, invalid or out of bounds.
 * Exposed for tests; bounds-checked against `len`.
 */
int ir_exif_orientation(const unsigned char *data, size_t len);

/*
 * The rectangle (sx, sy, sw, sh) of a truecolor image resampled to dw x dh
 * with a triangle filter whose support widens with the reduction (as
 * gdImageScale with GD_TRIANGLE, computed in fixed point). A new image the
 * caller frees with gdImageDestroy, or NULL (out of memory, a rectangle
 * outside the image, a palette image).
 */
gdImagePtr ir_resample_triangle(gdImagePtr src, int sx, int sy, int sw, int sh, int dw, int dh);

/* gd's function-like macros do not import into Swift. */
static inline int ir_gd_sx(gdImagePtr im) { return gdImageSX(im); }
static inline int ir_gd_sy(gdImagePtr im) { return gdImageSY(im); }
static inline int ir_gd_truecolor_pixel(gdImagePtr im, int x, int y) {
    return gdImageTrueColorPixel(im, x, y);
}
static inline int ir_gd_red(int c) { return gdTrueColorGetRed(c); }
static inline int ir_gd_green(int c) { return gdTrueColorGetGreen(c); }
static inline int ir_gd_blue(int c) { return gdTrueColorGetBlue(c); }
static inline int ir_gd_alpha(int c) { return gdTrueColorGetAlpha(c); }
static inline int ir_gd_truecolor(int r, int g, int b) { return gdTrueColor(r, g, b); }

#ifdef __cplusplus
}
#endif
#endif
