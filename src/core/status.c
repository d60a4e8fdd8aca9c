/* status.c — names and messages of kiln_status, generated from KILN_STATUS_MAP.
 * Layer: core. Depends on kiln.h only. */
#include "kiln/kiln.h"

const char *kiln_status_str(kiln_status status)
{
    switch (status) {
#define KILN_STATUS_STR_(name, value, message) case KILN_##name: return message;
        KILN_STATUS_MAP(KILN_STATUS_STR_)
#undef KILN_STATUS_STR_
    }
    return "unknown status";
}

const char *kiln_status_name(kiln_status status)
{
    switch (status) {
#define KILN_STATUS_NAME_(name, value, message) case KILN_##name: return #name;
        KILN_STATUS_MAP(KILN_STATUS_NAME_)
#undef KILN_STATUS_NAME_
    }
    return "UNKNOWN";
}

const char *kiln_version_string(void)
{
#define KILN_STR2_(x) #x
#define KILN_STR_(x) KILN_STR2_(x)
    return KILN_STR_(KILN_VERSION_MAJOR) "." KILN_STR_(KILN_VERSION_MINOR) "." KILN_STR_(KILN_VERSION_PATCH);
}
