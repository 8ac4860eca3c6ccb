/* JNI glue of the Java binding (java/src/dev/warplens/Warplens.java): each native method calls
 * the C API of libwarplens (warplens.h), which forwards to the recorder when the program runs
 * under `warplens run` and does nothing otherwise. Built as libwarplens_jni.so beside
 * libwarplens.so when the JDK's headers are found. */
#include <jni.h>
#include <stdint.h>

#include "warplens/warplens.h"

/* The string's modified UTF-8 (what names hold), or NULL; release with release(). */
static const char *chars(JNIEnv *env, jstring s) { return s ? (*env)->GetStringUTFChars(env, s, NULL) : NULL; }
static void release(JNIEnv *env, jstring s, const char *c)
{
    if (c)
        (*env)->ReleaseStringUTFChars(env, s, c);
}

JNIEXPORT jlong JNICALL Java_dev_warplens_Warplens_nativeScopeBegin(JNIEnv *env, jclass cls, jstring name,
                                                                   jlong app_thread_id)
{
    (void)cls;
    const char *n = chars(env, name);
    uint64_t id = warplens_scope_begin(n ? n : "");
    release(env, name, n);
    if (id)
        warplens_scope_thread_id((uint64_t)app_thread_id);
    return (jlong)id;
}

JNIEXPORT jlong JNICALL Java_dev_warplens_Warplens_nativeScopeEnd(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return (jlong)warplens_scope_end();
}

JNIEXPORT void JNICALL Java_dev_warplens_Warplens_nativeThreadName(JNIEnv *env, jclass cls, jstring name)
{
    (void)cls;
    const char *n = chars(env, name);
    if (n)
        warplens_thread_name(n);
    release(env, name, n);
}

JNIEXPORT void JNICALL Java_dev_warplens_Warplens_nativeAnnotateNextLaunch(JNIEnv *env, jclass cls, jdouble flops,
                                                                          jdouble bytes, jint precision)
{
    (void)env, (void)cls;
    warplens_annotate_next_launch(flops, bytes, precision);
}

JNIEXPORT jboolean JNICALL Java_dev_warplens_Warplens_nativeIsRecording(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return warplens_is_recording() ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT void JNICALL Java_dev_warplens_Warplens_nativeSetTier(JNIEnv *env, jclass cls, jstring tier)
{
    (void)cls;
    const char *t = chars(env, tier);
    warplens_set_tier(t);
    release(env, tier, t);
}
