// librsvg 2.54 (Debian's librsvg2-dev) and cairo, for rasterising SVG.
//
// rsvg.h includes GLib's and gdk-pixbuf's headers from directories of
// their own, which only pkg-config's flags find, and those carry
// -pthread, which SwiftPM refuses (a warning on every build). So the
// handful of functions Imago calls are declared here, as librsvg's and
// GLib's stable C API declares them (gboolean is int, gsize size_t,
// guint8 unsigned char, GQuark a 32-bit unsigned integer); cairo's own
// header is found at <cairo/cairo.h>.
#include <stddef.h>
#include <stdint.h>
#include <cairo/cairo.h>

typedef struct _RsvgHandle RsvgHandle;

typedef struct _GError {
    uint32_t domain;
    int code;
    char *message;
} GError;

typedef struct {
    double x;
    double y;
    double width;
    double height;
} RsvgRectangle;

// A handle without a base URL (so nothing but data: URLs is ever loaded)
// and without RSVG_HANDLE_FLAG_UNLIMITED (so libxml2's limits hold).
RsvgHandle *rsvg_handle_new_from_data(const unsigned char *data, size_t data_len, GError **error);
void rsvg_handle_set_dpi(RsvgHandle *handle, double dpi);
int rsvg_handle_render_document(RsvgHandle *handle, cairo_t *cr, const RsvgRectangle *viewport, GError **error);

void g_object_unref(void *object);
void g_error_free(GError *error);
