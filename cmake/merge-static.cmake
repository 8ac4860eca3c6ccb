# cmake -DAR=<ar> -DMRI=<script> -DOUT=<archive> -P merge-static.cmake: one archive out of several
# (GNU ar's MRI script: create, addlib..., save), for libwarplens.a (cmake/install.cmake).
file(REMOVE ${OUT})
execute_process(COMMAND ${AR} -M INPUT_FILE ${MRI} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${OUT})
  message(FATAL_ERROR "merging ${OUT} failed: ${err}")
endif()
