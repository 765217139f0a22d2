# `cmake --install`: the binary, the default config, the static files, the
# docs, the systemd unit and the logrotate file, where the prefix puts them
# (GNUInstallDirs). With the prefix /usr (the .deb) the config goes to
# /etc/portico/, as Debian's own packages do.
include(GNUInstallDirs)

install(TARGETS portico RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
install(DIRECTORY www/ DESTINATION ${CMAKE_INSTALL_DATADIR}/portico/www)
# The README and the user docs (docs/*.md), laid out as in the repository so
# the README's links to docs/ work in the installed copy too.
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")

# The config, the unit and the logrotate file name other installed files by
# their full path, and the prefix is only final at install time
# (`cmake --install --prefix DIR`, cpack): a script writes them then.
install(CODE "
  set(PORTICO_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
  set(PORTICO_WRITTEN_DIR \"${PROJECT_BINARY_DIR}/install-time\")
  set(PORTICO_SBINDIR \"${CMAKE_INSTALL_SBINDIR}\")
  set(PORTICO_DATADIR \"${CMAKE_INSTALL_DATADIR}\")
  set(PORTICO_DOCDIR \"${CMAKE_INSTALL_DOCDIR}\")
")
install(SCRIPT cmake/install_with_paths.cmake)
