/* The recorder's one CUPTI callback (defined in cupti_setup.c): every callback domain it subscribes
 * to arrives here. Declared for bench/recorder_callback_cost.c, which calls it the way CUPTI does. */
#ifndef WARPLENS_CAPTURE_CUPTI_CALLBACK_H
#define WARPLENS_CAPTURE_CUPTI_CALLBACK_H

#include <cupti.h>

void CUPTIAPI wl_cupti_on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void *data);

#endif
