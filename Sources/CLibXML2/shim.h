// libxml2's headers live under /usr/include/libxml2 (found through
// pkg-config's libxml-2.0, Package.swift).
#include <libxml/xmlversion.h>
// Debian's libxml2 is built with ICU, whose headers clash with the ICU that
// Foundation carries (a test target imports both). Only the encoding
// handler's struct, which nothing here touches, differs without it.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
