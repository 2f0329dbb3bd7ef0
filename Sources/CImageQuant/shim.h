#include <libimagequant.h>
