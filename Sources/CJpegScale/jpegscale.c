/*
 * CJpegScale: libjpeg-turbo decoding with setjmp/longjmp error handling,
 * DCT-scaled straight into a gd truecolor image. See include/CJpegScale.h.
 *
 * setjmp discipline: the functions that call setjmp (read_header_impl,
 * decode_impl) keep all state that changes after setjmp in a context struct
 * owned by their caller and reached through a pointer, never in their own
 * non-volatile locals, so it is valid after a longjmp (C11 7.13.2.1p2).
 */
#define _POSIX_C_SOURCE 200809L  /* fileno, fstat */
#include "CJpegScale.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <jpeglib.h>
#include <jerror.h>

/* A progressive file may legally have many scans, but each one re-walks the
 * whole coefficient buffer: cap them so a hostile file cannot spin for long.
 * Real encoders use ~10 (libjpeg's default progression) to ~64. */
#define IR_MAX_SCANS 256

/* Input buffer of our source manager. libjpeg-turbo's fast Huffman path runs
 * only while >= 512 bytes per block of an MCU (3 KB for 4:2:0) are buffered,
 * so jpeg_stdio_src's 4 KB buffer keeps it on the slow path most of the time
 * (measured: ~1.5x slower entropy decoding on a 12 MP photo). */
#define IR_INPUT_BUFFER (256 * 1024)

typedef struct {
    struct jpeg_error_mgr pub;  /* must be first: libjpeg hands us &pub */
    jmp_buf jump;
    int status;                 /* ir_jpeg_status to return after the jump */
    int tolerate_warnings;      /* decode on through libjpeg's warnings, as GD does */
    char *msg;
    size_t msg_len;
} ir_error_mgr;

typedef struct {
    struct jpeg_source_mgr pub;  /* must be first */
    FILE *fp;
    JOCTET *buffer;
    int start_of_file;
} ir_source_mgr;

typedef struct {
    struct jpeg_decompress_struct cinfo;
    ir_error_mgr err;
    struct jpeg_progress_mgr progress;
    int created;                /* jpeg_create_decompress succeeded */
    gdImagePtr im;              /* image under construction, owned until handed out */
} ir_ctx;

/* ---- messages ---------------------------------------------------------- */

static void set_msg(ir_error_mgr *err, const char *fmt, ...) {
    if (err->msg == NULL || err->msg_len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, err->msg_len, fmt, ap);
    va_end(ap);
}

static void set_msg_plain(char *msg, size_t msg_len, const char *fmt, ...) {
    if (msg == NULL || msg_len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msg_len, fmt, ap);
    va_end(ap);
}

static int status_for_code(int code) {
    switch (code) {
    case JERR_NO_SOI:
    case JERR_INPUT_EMPTY:
        return IR_JPEG_ERR_NOT_JPEG;
    case JERR_OUT_OF_MEMORY:
        return IR_JPEG_ERR_NO_MEMORY;
    case JERR_IMAGE_TOO_BIG:        /* a side > 65500 */
    case JERR_BAD_PRECISION:
    case JERR_CONVERSION_NOTIMPL:
    case JERR_NOTIMPL:
    case JERR_ARITH_NOTIMPL:
    case JERR_CCIR601_NOTIMPL:
    case JERR_FRACT_SAMPLE_NOTIMPL:
        return IR_JPEG_ERR_UNSUPPORTED;
    case JERR_NO_BACKING_STORE:     /* a buffer past max_memory_to_use */
        return IR_JPEG_ERR_TOO_MUCH_MEMORY;
    default:
        return IR_JPEG_ERR_CORRUPT;
    }
}

/* Records libjpeg's current message with the status it maps to, then jumps. */
static void fail_with_library_message(j_common_ptr cinfo) {
    ir_error_mgr *err = (ir_error_mgr *)cinfo->err;
    char buffer[JMSG_LENGTH_MAX];
    buffer[0] = '\0';
    (*cinfo->err->format_message)(cinfo, buffer);
    err->status = status_for_code(cinfo->err->msg_code);
    set_msg(err, "%s", buffer);
    longjmp(err->jump, 1);
}

static void ir_error_exit(j_common_ptr cinfo) {
    fail_with_library_message(cinfo);
}

/* msg_level -1 is a warning: libjpeg carries on with made-up data (grey
 * blocks for a truncated file). Here every warning fails the decode, except
 * an unknown JFIF minor/major version, which says nothing about the pixels,
 * and any when tolerated (a photo already stored: PHP's GD ignores them).
 * Levels >= 0 are trace messages: ignored. */
static void ir_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) return;
    cinfo->err->num_warnings++;
    if (cinfo->err->msg_code == JWRN_JFIF_MAJOR || ((ir_error_mgr *)cinfo->err)->tolerate_warnings) return;
    fail_with_library_message(cinfo);
}

static void ir_output_message(j_common_ptr cinfo) {
    (void)cinfo; /* never print to stderr */
}

static void ir_progress(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (d->input_scan_number > IR_MAX_SCANS) {
        ir_error_mgr *err = (ir_error_mgr *)cinfo->err;
        err->status = IR_JPEG_ERR_UNSUPPORTED;
        set_msg(err, "JPEG has more than %d scans", IR_MAX_SCANS);
        longjmp(err->jump, 1);
    }
}

/* ---- EXIF orientation -------------------------------------------------- */

static unsigned rd16(const unsigned char *p, int big_endian) {
    return big_endian ? ((unsigned)p[0] << 8 | p[1]) : ((unsigned)p[1] << 8 | p[0]);
}

static uint32_t rd32(const unsigned char *p, int big_endian) {
    return big_endian
        ? ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3])
        : ((uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]);
}

int ir_exif_orientation(const unsigned char *data, size_t len) {
    static const unsigned char exif_id[6] = { 'E', 'x', 'i', 'f', 0, 0 };
    if (data == NULL || len < 6 + 8 || memcmp(data, exif_id, 6) != 0) return 1;
    const unsigned char *tiff = data + 6;
    size_t tlen = len - 6;
    int big;
    if (tiff[0] == 'I' && tiff[1] == 'I') big = 0;
    else if (tiff[0] == 'M' && tiff[1] == 'M') big = 1;
    else return 1;
    if (rd16(tiff + 2, big) != 42) return 1;
    uint32_t ifd = rd32(tiff + 4, big);
    if (ifd < 8 || (size_t)ifd > tlen - 2) return 1;
    unsigned count = rd16(tiff + ifd, big);
    for (unsigned i = 0; i < count; i++) {
        size_t entry = (size_t)ifd + 2 + (size_t)12 * i;
        if (entry + 12 > tlen) break;
        const unsigned char *e = tiff + entry;
        if (rd16(e, big) != 0x0112) continue;
        unsigned type = rd16(e + 2, big);
        uint32_t n = rd32(e + 4, big);
        unsigned value;
        if (n < 1) return 1;
        if (type == 3) value = rd16(e + 8, big);        /* SHORT: the standard */
        else if (type == 4) value = rd32(e + 8, big);   /* LONG: seen from sloppy writers */
        else return 1;
        return (value >= 1 && value <= 8) ? (int)value : 1;
    }
    return 1;
}

static int orientation_from_markers(j_decompress_ptr cinfo) {
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m != NULL; m = m->next) {
        if (m->marker != JPEG_APP0 + 1 || m->data_length < 6) continue;
        if (memcmp(m->data, "Exif\0\0", 6) != 0) continue;   /* e.g. XMP also uses APP1 */
        return ir_exif_orientation(m->data, m->data_length);
    }
    return 1;
}

/* ---- source manager: jpeg_stdio_src with a large buffer ---------------- */

static void src_init(j_decompress_ptr cinfo) {
    ((ir_source_mgr *)cinfo->src)->start_of_file = 1;
}

static boolean src_fill(j_decompress_ptr cinfo) {
    static const JOCTET fake_eoi[2] = { 0xFF, JPEG_EOI };
    ir_source_mgr *src = (ir_source_mgr *)cinfo->src;
    size_t n = fread(src->buffer, 1, IR_INPUT_BUFFER, src->fp);
    if (n == 0) {
        if (src->start_of_file) ERREXIT(cinfo, JERR_INPUT_EMPTY);
        WARNMS(cinfo, JWRN_JPEG_EOF);   /* fails the decode (ir_emit_message) */
        src->pub.next_input_byte = fake_eoi;
        src->pub.bytes_in_buffer = 2;
        return TRUE;
    }
    src->pub.next_input_byte = src->buffer;
    src->pub.bytes_in_buffer = n;
    src->start_of_file = 0;
    return TRUE;
}

static void src_skip(j_decompress_ptr cinfo, long num_bytes) {
    struct jpeg_source_mgr *src = cinfo->src;
    if (num_bytes <= 0) return;
    while ((size_t)num_bytes > src->bytes_in_buffer) {
        num_bytes -= (long)src->bytes_in_buffer;
        (void)(*src->fill_input_buffer)(cinfo);
    }
    src->next_input_byte += (size_t)num_bytes;
    src->bytes_in_buffer -= (size_t)num_bytes;
}

static void src_term(j_decompress_ptr cinfo) {
    (void)cinfo;
}

/* Both the manager and its buffer come from JPOOL_PERMANENT: freed by
 * jpeg_destroy_decompress, also after a longjmp. */
static void use_file_source(j_decompress_ptr cinfo, FILE *fp) {
    ir_source_mgr *src = (ir_source_mgr *)(*cinfo->mem->alloc_small)(
        (j_common_ptr)cinfo, JPOOL_PERMANENT, sizeof(ir_source_mgr));
    src->buffer = (JOCTET *)(*cinfo->mem->alloc_large)(
        (j_common_ptr)cinfo, JPOOL_PERMANENT, IR_INPUT_BUFFER);
    src->fp = fp;
    src->start_of_file = 1;
    src->pub.init_source = src_init;
    src->pub.fill_input_buffer = src_fill;
    src->pub.skip_input_data = src_skip;
    src->pub.resync_to_restart = jpeg_resync_to_restart;
    src->pub.term_source = src_term;
    src->pub.bytes_in_buffer = 0;
    src->pub.next_input_byte = NULL;
    cinfo->src = &src->pub;
}

/* ---- shared setup ------------------------------------------------------ */

static int colorspace_of(J_COLOR_SPACE cs) {
    switch (cs) {
    case JCS_GRAYSCALE: return IR_JPEG_CS_GRAYSCALE;
    case JCS_RGB: return IR_JPEG_CS_RGB;
    case JCS_YCbCr: return IR_JPEG_CS_YCBCR;
    case JCS_CMYK: return IR_JPEG_CS_CMYK;
    case JCS_YCCK: return IR_JPEG_CS_YCCK;
    default: return IR_JPEG_CS_UNKNOWN;
    }
}

/* What libjpeg's coefficient controller allocates for a file it must
 * buffer whole (jdcoefct.c): each component's blocks, rounded up to whole
 * MCUs, 64 JCOEFs a block. 0 for a single-scan file, decoded a row of MCUs
 * at a time. Valid after jpeg_read_header (jdinput.c's initial_setup). */
static long long coefficient_bytes(j_decompress_ptr cinfo) {
    if (!jpeg_has_multiple_scans(cinfo)) return 0;
    long long total = 0;
    for (int i = 0; i < cinfo->num_components; i++) {
        jpeg_component_info *comp = &cinfo->comp_info[i];
        long long wide = (comp->width_in_blocks + comp->h_samp_factor - 1) / comp->h_samp_factor * comp->h_samp_factor;
        long long high = (comp->height_in_blocks + comp->v_samp_factor - 1) / comp->v_samp_factor * comp->v_samp_factor;
        total += wide * high * (long long)sizeof(JBLOCK);
    }
    return total;
}

static void fill_info(j_decompress_ptr cinfo, ir_jpeg_info *info) {
    if (info == NULL) return;
    info->width = (int)cinfo->image_width;
    info->height = (int)cinfo->image_height;
    info->components = cinfo->num_components;
    info->colorspace = colorspace_of(cinfo->jpeg_color_space);
    info->progressive = cinfo->progressive_mode ? 1 : 0;
    info->multi_scan = jpeg_has_multiple_scans(cinfo) ? 1 : 0;
    info->coefficient_bytes = coefficient_bytes(cinfo);
}

static void ctx_init(ir_ctx *c, char *msg, size_t msg_len) {
    memset(c, 0, sizeof *c);
    c->cinfo.err = jpeg_std_error(&c->err.pub);
    c->err.pub.error_exit = ir_error_exit;
    c->err.pub.emit_message = ir_emit_message;
    c->err.pub.output_message = ir_output_message;
    c->err.status = IR_JPEG_OK;
    c->err.msg = msg;
    c->err.msg_len = msg_len;
    c->progress.progress_monitor = ir_progress;
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
}

/* Creates the decompressor and reads the header; only called after setjmp. */
static void start(ir_ctx *c, FILE *fp, ir_jpeg_info *info) {
    j_decompress_ptr cinfo = &c->cinfo;
    jpeg_create_decompress(cinfo);
    c->created = 1;
    cinfo->progress = &c->progress;
    use_file_source(cinfo, fp);
    jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(cinfo, TRUE);
    fill_info(cinfo, info);
    if (info != NULL) info->orientation = orientation_from_markers(cinfo);
}

static void ctx_finish(ir_ctx *c, ir_jpeg_info *info) {
    /* On a failure inside jpeg_read_header the size may already be known
     * (e.g. JERR_IMAGE_TOO_BIG): report what there is. */
    if (info != NULL && c->created && c->err.status != IR_JPEG_OK && info->width == 0) {
        info->width = (int)c->cinfo.image_width;
        info->height = (int)c->cinfo.image_height;
    }
    if (c->created) jpeg_destroy_decompress(&c->cinfo);
    c->created = 0;
    if (c->im != NULL) gdImageDestroy(c->im);
    c->im = NULL;
}

/* ---- header only ------------------------------------------------------- */

static int read_header_impl(ir_ctx *c, FILE *fp, ir_jpeg_info *info) {
    if (setjmp(c->err.jump)) return c->err.status;
    start(c, fp, info);
    return IR_JPEG_OK;
}

ir_jpeg_status ir_jpeg_read_header_file(FILE *fp, ir_jpeg_info *info, char *msg, size_t msg_len) {
    ir_ctx c;
    ctx_init(&c, msg, msg_len);
    if (info != NULL) { memset(info, 0, sizeof *info); info->orientation = 1; }
    c.err.status = read_header_impl(&c, fp, info);
    int status = c.err.status;
    ctx_finish(&c, info);
    return status;
}

/* ---- scaled decode ----------------------------------------------------- */

/* gd truecolor pixels are ints 0x7F_RR_GG_BB-style (alpha in the top 7 bits,
 * 0 = opaque). libjpeg writes 4 bytes per pixel; pick the byte order that
 * lands R, G, B in the right places of a native int, then clear the top byte. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define IR_GD_PIXEL_LAYOUT JCS_EXT_XRGB
#else
#define IR_GD_PIXEL_LAYOUT JCS_EXT_BGRX
#endif

static void cmyk_row_to_gd(const JSAMPLE *src, int *dst, JDIMENSION width, int inverted) {
    for (JDIMENSION x = 0; x < width; x++, src += 4) {
        unsigned c = src[0], m = src[1], y = src[2], k = src[3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        /* inverted (Adobe) data stores 255 - ink, so R = (255 - C_ink) * (255 - K_ink) / 255 */
        unsigned r = (c * k + 127) / 255, g = (m * k + 127) / 255, b = (y * k + 127) / 255;
        dst[x] = (int)(r << 16 | g << 8 | b);
    }
}

static int decode_impl(ir_ctx *c, FILE *fp, int min_short_side, long long max_pixels,
                       long long max_decode_bytes, ir_jpeg_info *info) {
    if (setjmp(c->err.jump)) return c->err.status;
    j_decompress_ptr cinfo = &c->cinfo;
    start(c, fp, info);

    long long pixels = (long long)cinfo->image_width * (long long)cinfo->image_height;
    if (max_pixels > 0 && pixels > max_pixels) {
        set_msg(&c->err, "JPEG is %ux%u = %lld pixels, more than the limit of %lld",
                cinfo->image_width, cinfo->image_height, pixels, max_pixels);
        return IR_JPEG_ERR_TOO_MANY_PIXELS;
    }
    if (cinfo->arith_code) {
        set_msg(&c->err, "arithmetic-coded JPEG (SOF%d) is not accepted", cinfo->progressive_mode ? 10 : 9);
        return IR_JPEG_ERR_UNSUPPORTED;
    }
    long long coefficients = coefficient_bytes(cinfo);
    if (max_decode_bytes > 0 && coefficients > max_decode_bytes) {
        set_msg(&c->err, "%s JPEG of %ux%u needs %lld bytes of coefficients, more than the limit of %lld",
                cinfo->progressive_mode ? "progressive" : "multi-scan",
                cinfo->image_width, cinfo->image_height, coefficients, max_decode_bytes);
        return IR_JPEG_ERR_TOO_MUCH_MEMORY;
    }
    /* Second line: libjpeg refuses any whole-image buffer past this (it has
     * no backing store: JERR_NO_BACKING_STORE). Room for the small buffers. */
    if (max_decode_bytes > 0) cinfo->mem->max_memory_to_use = (long)(max_decode_bytes + (8L << 20));

    int cmyk = 0;
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE:
    case JCS_YCbCr:
    case JCS_RGB:
        cinfo->out_color_space = IR_GD_PIXEL_LAYOUT;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        cinfo->out_color_space = JCS_CMYK;  /* libjpeg does YCCK -> CMYK; we do CMYK -> RGB */
        cmyk = 1;
        break;
    default:
        set_msg(&c->err, "unsupported JPEG colour space (%d components)", cinfo->num_components);
        return IR_JPEG_ERR_UNSUPPORTED;
    }

    cinfo->scale_denom = 8;
    for (unsigned m = 1; m <= 8; m++) {
        /* 3/8 runs libjpeg-turbo's plain-C 3x3 (and, for 4:2:0 chroma, 6x6)
         * IDCT; 4/8 its SIMD 4x4 and 8x8 ones: a 640x640 photo decodes in
         * 0.80 ms at 4/8 against 0.96 at 3/8, for 1.8 times the pixels. */
        if (m == 3) continue;
        cinfo->scale_num = m;
        jpeg_calc_output_dimensions(cinfo);
        JDIMENSION short_side = cinfo->output_width < cinfo->output_height
            ? cinfo->output_width : cinfo->output_height;
        if ((long long)short_side >= (long long)min_short_side) break;
    }

    jpeg_start_decompress(cinfo);
    JDIMENSION width = cinfo->output_width, height = cinfo->output_height;
    if (info != NULL) {
        info->scaled_width = (int)width;
        info->scaled_height = (int)height;
        info->scale_num = (int)cinfo->scale_num;
    }

    c->im = gdImageCreateTrueColor((int)width, (int)height);
    if (c->im == NULL) {
        set_msg(&c->err, "cannot allocate a %ux%u image", width, height);
        return IR_JPEG_ERR_NO_MEMORY;
    }
    int **rows = c->im->tpixels;

    if (!cmyk) {
        while (cinfo->output_scanline < height) {
            JDIMENSION y = cinfo->output_scanline;
            JDIMENSION n = jpeg_read_scanlines(cinfo, (JSAMPARRAY)(void *)(rows + y), height - y);
            if (n == 0) {
                set_msg(&c->err, "JPEG decoder made no progress at line %u", y);
                return IR_JPEG_ERR_CORRUPT;
            }
            for (JDIMENSION r = y; r < y + n; r++) {
                unsigned int *p = (unsigned int *)rows[r];
                for (JDIMENSION x = 0; x < width; x++) p[x] &= 0x00FFFFFFu;
            }
        }
    } else {
        /* Freed with the decompressor (JPOOL_IMAGE), also after a longjmp. */
        JSAMPARRAY buf = (*cinfo->mem->alloc_sarray)((j_common_ptr)cinfo, JPOOL_IMAGE,
                                                     width * 4, 1);
        int inverted = cinfo->saw_Adobe_marker ? 1 : 0;
        while (cinfo->output_scanline < height) {
            JDIMENSION y = cinfo->output_scanline;
            if (jpeg_read_scanlines(cinfo, buf, 1) != 1) {
                set_msg(&c->err, "JPEG decoder made no progress at line %u", y);
                return IR_JPEG_ERR_CORRUPT;
            }
            cmyk_row_to_gd(buf[0], rows[y], width, inverted);
        }
    }

    /* Reads to EOI: data missing or broken after the last scanline fails too. */
    jpeg_finish_decompress(cinfo);
    return IR_JPEG_OK;
}

ir_jpeg_status ir_jpeg_decode_scaled_file(FILE *fp, int min_short_side, long long max_pixels,
                               long long max_decode_bytes, int tolerate_warnings, gdImagePtr *out,
                               ir_jpeg_info *info, char *msg, size_t msg_len) {
    if (out != NULL) *out = NULL;
    if (info != NULL) { memset(info, 0, sizeof *info); info->orientation = 1; }
    ir_ctx c;
    ctx_init(&c, msg, msg_len);
    c.err.tolerate_warnings = tolerate_warnings;
    c.err.status = decode_impl(&c, fp, min_short_side, max_pixels, max_decode_bytes, info);
    int status = c.err.status;
    if (status == IR_JPEG_OK) {
        if (out != NULL) *out = c.im;
        else gdImageDestroy(c.im);
        c.im = NULL;
    }
    ctx_finish(&c, info);
    return status;
}

/* ---- path variants ----------------------------------------------------- */

static FILE *open_jpeg(const char *path, char *msg, size_t msg_len, int *status) {
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        int e = errno;
        set_msg_plain(msg, msg_len, "cannot open %s: %s", path, strerror(e));
        *status = IR_JPEG_ERR_IO;
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        set_msg_plain(msg, msg_len, "%s is not a regular file", path);
        fclose(fp);
        *status = IR_JPEG_ERR_IO;
        return NULL;
    }
    *status = IR_JPEG_OK;
    return fp;
}

ir_jpeg_status ir_jpeg_read_header(const char *path, ir_jpeg_info *info, char *msg, size_t msg_len) {
    int status;
    if (info != NULL) { memset(info, 0, sizeof *info); info->orientation = 1; }
    FILE *fp = open_jpeg(path, msg, msg_len, &status);
    if (fp == NULL) return status;
    status = ir_jpeg_read_header_file(fp, info, msg, msg_len);
    fclose(fp);
    return status;
}

ir_jpeg_status ir_jpeg_decode_scaled(const char *path, int min_short_side, long long max_pixels,
                          long long max_decode_bytes, int tolerate_warnings, gdImagePtr *out,
                          ir_jpeg_info *info, char *msg, size_t msg_len) {
    int status;
    if (out != NULL) *out = NULL;
    if (info != NULL) { memset(info, 0, sizeof *info); info->orientation = 1; }
    FILE *fp = open_jpeg(path, msg, msg_len, &status);
    if (fp == NULL) return status;
    status = ir_jpeg_decode_scaled_file(fp, min_short_side, max_pixels, max_decode_bytes, tolerate_warnings, out, info,
                                        msg, msg_len);
    fclose(fp);
    return status;
}
