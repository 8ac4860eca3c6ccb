# `cmake --install build --prefix P`: the CLI, libwarplens (shared and static), the recorder and the
# CLI's other private files under <libdir>/warplens, the public headers under include/warplens/,
# warplens.pc, the CMake package (find_package(warplens CONFIG) -> warplens::warplens), the docs, the
# man pages and the bash and zsh completions. Every installed path is relative to P: the tree can be moved after installing.
include(CMakePackageConfigHelpers)

# libwarplens.a: the API's objects and the layers its session reader uses, merged into one archive
# (a user links -lwarplens, plus SQLite and the runtime libraries warplens.pc lists as private).
add_library(warplens_api_objs STATIC ${WL_API_SRC})
set_target_properties(warplens_api_objs PROPERTIES OUTPUT_NAME warplens_api_objs)
target_link_libraries(warplens_api_objs PRIVATE warplens_core)
set(WL_STATIC_LIB ${CMAKE_BINARY_DIR}/lib/libwarplens.a)
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/warplens_static.mri CONTENT
"create ${WL_STATIC_LIB}
addlib $<TARGET_FILE:warplens_api_objs>
addlib $<TARGET_FILE:warplens_core>
addlib $<TARGET_FILE:warplens_capfile>
addlib $<TARGET_FILE:warplens_common>
save
end
")
add_custom_command(OUTPUT ${WL_STATIC_LIB}
  COMMAND ${CMAKE_COMMAND} -DAR=${CMAKE_AR} -DMRI=${CMAKE_BINARY_DIR}/warplens_static.mri -DOUT=${WL_STATIC_LIB}
          -P ${CMAKE_SOURCE_DIR}/cmake/merge-static.cmake
  DEPENDS warplens_api_objs warplens_core warplens_capfile warplens_common ${CMAKE_BINARY_DIR}/warplens_static.mri
          ${CMAKE_SOURCE_DIR}/cmake/merge-static.cmake
  COMMENT "libwarplens.a")
add_custom_target(warplens_static ALL DEPENDS ${WL_STATIC_LIB})

install(TARGETS warplens_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS warplens_api LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${WL_STATIC_LIB} DESTINATION ${CMAKE_INSTALL_LIBDIR})

# private files of the CLI: found by `warplens run` relative to its own executable
install(TARGETS warplens_recorder LIBRARY DESTINATION ${WL_INSTALL_PRIVLIBDIR})
install(FILES ${CMAKE_BINARY_DIR}/lib/warplens-python/sitecustomize.py
  DESTINATION ${WL_INSTALL_PRIVLIBDIR}/warplens-python)
if(WARPLENS_JAVA_BUILT)
  file(RELATIVE_PATH WL_PRIVLIB_TO_LIB /p/${WL_INSTALL_PRIVLIBDIR} /p/${CMAKE_INSTALL_LIBDIR})
  set_target_properties(warplens_jni PROPERTIES INSTALL_RPATH "$ORIGIN/${WL_PRIVLIB_TO_LIB}")
  install(TARGETS warplens_jni LIBRARY DESTINATION ${WL_INSTALL_PRIVLIBDIR})
  install_jar(warplens_jar DESTINATION ${CMAKE_INSTALL_DATADIR}/java)
endif()

install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/warplens DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh")

# warplens.pc: relocatable through pkg-config's ${pcfiledir}
file(RELATIVE_PATH WL_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" WL_PC_TO_PREFIX "${WL_PC_TO_PREFIX}")
set(WL_PC_PREFIX "\${pcfiledir}/${WL_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/warplens.pc.in ${CMAKE_BINARY_DIR}/warplens.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/warplens.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(WL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/warplens)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/warplens-config.cmake.in
  ${CMAKE_BINARY_DIR}/warplens-config.cmake INSTALL_DESTINATION ${WL_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
# 0.x: a new minor version may change the API, so only the same major.minor is compatible
write_basic_package_version_file(${CMAKE_BINARY_DIR}/warplens-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/warplens-config.cmake ${CMAKE_BINARY_DIR}/warplens-config-version.cmake
  DESTINATION ${WL_CMAKE_DIR})

file(GLOB WL_DOCS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${WL_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_BINARY_DIR}/share/man/man1 DESTINATION ${CMAKE_INSTALL_MANDIR}
  FILES_MATCHING PATTERN "*.1")
install(FILES ${WL_BASH_COMPLETION} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${WL_ZSH_COMPLETION} DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
