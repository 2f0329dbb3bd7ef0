#include <lcms2.h>

// lcms2's pixel types are macros built from function-like macros, which
// Swift does not import: the ones Imago uses, as constants.
static const cmsUInt32Number imago_TYPE_GRAY_8 = TYPE_GRAY_8;
static const cmsUInt32Number imago_TYPE_GRAYA_8 = TYPE_GRAYA_8;
static const cmsUInt32Number imago_TYPE_RGB_8 = TYPE_RGB_8;
static const cmsUInt32Number imago_TYPE_RGBA_8 = TYPE_RGBA_8;
static const cmsUInt32Number imago_TYPE_RGB_16 = TYPE_RGB_16;
static const cmsUInt32Number imago_TYPE_RGBA_16 = TYPE_RGBA_16;
static const cmsUInt32Number imago_TYPE_CMYK_8 = TYPE_CMYK_8;
static const cmsUInt32Number imago_TYPE_CMYK_8_REV = TYPE_CMYK_8_REV;
static const cmsUInt32Number imago_TYPE_Lab_DBL = TYPE_Lab_DBL;
