#!/usr/bin/env bash
# The Java binding (java/, JDK 17): a JVM program's calls reach the recorder's bridge through JNI
# and libwarplens, with their arguments (a logging stand-in for the recorder,
# tests/java/stub_recorder.c); without the native library, or without a recorder, every call is a
# no-op and the program runs on; under `warplens run` on a machine without a GPU the program runs,
# warplens says so in one line, and the exit status is the program's. The GPU thread factory
# names its threads warpforge-gpu-<scope>-task-<n>: platform threads on 17 (which also name their
# OS thread), virtual threads on 21+ (checked when such a JDK is installed).
set -u
W=${WARPLENS_BIN:?}
SRC=${WARPLENS_SOURCE_DIR:?}
BUILD=${WARPLENS_BUILD_DIR:?}
. "$SRC/tests/cli/checks.sh"
if [ "${WARPLENS_JAVA_BUILT:-0}" != 1 ]; then
    echo "java_cli: the Java binding is not built here (sanitizer build): nothing to run"
    exit 0
fi
JAR=$BUILD/lib/warplens.jar JNI=$BUILD/lib/libwarplens_jni.so STUB=$BUILD/lib/libwl_stub_recorder.so
for f in "$JAR" "$JNI" "$STUB"; do
    [ -e "$f" ] || { echo "FAIL: $f was not built"; exit 1; }
done
javac -cp "$JAR" -d cls "$SRC/tests/java/BindingCheck.java" || { echo "FAIL: javac"; exit 1; }
# the binding is Java 17 bytecode (class file version 61)
check "javap -v -cp '$JAR' dev.warplens.Warplens | grep -qx '  major version: 61'" "warplens.jar is not Java 17 bytecode"
run_java() { # JAVA ENV... -- writes out.txt, err.txt; returns the status
    local java=$1; shift
    env -u WARPLENS_JNI -u WARPLENS_RECORDER "$@" "$java" -cp "$JAR:cls" BindingCheck >out.txt 2>err.txt
}

# expected bridge calls for a JVM of major version $1 with main thread id $2 and task thread ids $3 $4
expected_log() {
    printf '%s\n' "is_recording" "thread_name loader" "scope_begin batch-1" "scope_thread_id $2" \
        "annotate_next_launch 2000000000 1000000 3" "set_tier PRODUCTION" "scope_begin inner" "scope_thread_id $2" \
        "scope_end" "scope_end" "set_tier (null)"
    for i in 0 1; do
        local id; [ $i = 0 ] && id=$3 || id=$4
        [ "$1" -lt 21 ] && echo "thread_name warpforge-gpu-infer-batch-task-$i"
        printf '%s\n' "scope_begin task" "scope_thread_id $id" "scope_end"
    done
}

check_jvm() { # JAVA LABEL
    local java=$1 label=$2
    rm -f stub.log
    run_java "$java" WARPLENS_JNI="$JNI" WARPLENS_RECORDER="$STUB" WL_STUB_LOG="$PWD/stub.log"
    check "[ $? = 0 ]" "$label: the program failed: $(head -3 err.txt)"
    local major main t0 t1
    major=$(awk '$1 == "java" {print $2}' out.txt)
    main=$(awk '$1 == "main-thread" {print $2}' out.txt)
    t0=$(awk '$1 == "in" && $2 ~ /task-0$/ {print $4}' out.txt)
    t1=$(awk '$1 == "in" && $2 ~ /task-1$/ {print $4}' out.txt)
    check "grep -qx 'recording true' out.txt && grep -qx 'scope true' out.txt" "$label: not recording through the stub: $(head -3 out.txt)"
    expected_log "${major:-0}" "$main" "$t0" "$t1" >want.log
    check "cmp -s want.log stub.log" "$label: bridge calls differ: $(diff want.log stub.log | head -6 | tr '\n' ' ')"
    local virtual=false
    [ "${major:-0}" -ge 21 ] && virtual=true
    check "grep -qx 'thread warpforge-gpu-infer-batch-task-0 virtual $virtual' out.txt &&
           grep -qx 'thread warpforge-gpu-infer-batch-task-1 virtual $virtual' out.txt" \
        "$label: GPU threads: $(grep '^thread' out.txt | tr '\n' ' ')"
}

check_jvm java "JDK $(java -version 2>&1 | head -1 | tr -d '"')"
major=$(awk '$1 == "java" {print $2}' out.txt)
check "[ '${major:-0}' -ge 17 ]" "the JDK is older than 17: ${major:-?}"

# no native library: every call a no-op, the program runs
run_java java
check "[ $? = 0 ] && grep -qx 'recording false' out.txt && grep -qx 'scope false' out.txt" \
    "without the JNI library: $(head -3 out.txt; head -3 err.txt)"
check "grep -qx 'thread warpforge-gpu-infer-batch-task-1 virtual false' out.txt || [ '${major:-0}' -ge 21 ]" \
    "without the JNI library the GPU threads are still named: $(grep '^thread' out.txt | tr '\n' ' ')"
# the JNI library but no recorder (a JVM not started by warplens run): no-ops through libwarplens
run_java java WARPLENS_JNI="$JNI"
check "[ $? = 0 ] && grep -qx 'recording false' out.txt && grep -qx 'scope false' out.txt" \
    "JNI without a recorder: $(head -3 out.txt; head -3 err.txt)"
# a recorder that does not match (the ABI check): one line, then no-ops
run_java java WARPLENS_JNI="$JNI" WARPLENS_RECORDER=/nonexistent/librecorder.so
check "[ $? = 0 ] && grep -qx 'recording false' out.txt && grep -c 'cannot load the recorder' err.txt | grep -qx 1" \
    "a missing recorder: $(head -3 out.txt; head -3 err.txt)"

# under `warplens run` on a machine without a GPU driver (as CI): one line, the program's status
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
    env -u WARPLENS_JNI "$W" run -- java -cp "$JAR:cls" BindingCheck >out.txt 2>err.txt
    rc=$?
    check "[ $rc = 0 ]" "warplens run -- java: exit $rc: $(head -3 err.txt)"
    check "[ \"\$(grep -vc 'Picked up' err.txt)\" = 1 ] && grep -q 'no NVIDIA driver' err.txt" \
        "warplens run -- java: not one line about the missing GPU: $(cat err.txt)"
    check "grep -qx 'recording false' out.txt && grep -q '^java ' out.txt" "warplens run -- java: $(head -3 out.txt)"
    check "[ ! -e java.wlsession ]" "a session was written without a GPU"
    # the program's own exit status comes back
    cat >Exit3.java <<'JAVA'
public final class Exit3 { public static void main(String[] a) { dev.warplens.Warplens.scope("x").close(); System.exit(3); } }
JAVA
    javac -cp "$JAR" -d cls Exit3.java
    "$W" run -q -- java -cp "$JAR:cls" Exit3 >/dev/null 2>&1
    check "[ $? = 3 ]" "warplens run -- java Exit3: status not passed on"
else
    echo "java_cli: a CUDA driver is present; the no-GPU run is the GPU suite's"
fi

# Java 21+ when one is installed (CI has 17): virtual threads with the same names
for j in /usr/lib/jvm/*/bin/java; do
    v=$("$j" -version 2>&1 | awk -F'"' '/version/ {split($2, p, "."); print p[1]; exit}')
    if [ "${v:-0}" -ge 21 ] 2>/dev/null; then
        check_jvm "$j" "JDK $v"
        break
    fi
done

summary java_cli
