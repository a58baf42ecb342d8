#ifndef RESENDGATE_CHIREDIS_SHIM_H
#define RESENDGATE_CHIREDIS_SHIM_H

// hiredis alone: libevent and evhttp are CLibevent's; our adapter joining the two is
// CRedisEvents.
#include <sys/types.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>
#include <hiredis/async.h>

#endif
