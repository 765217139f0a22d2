# Runs at install time (cmake --install, cpack), once the prefix is known:
# installs the files that name other installed files by their full path.
# Each replaced text must be found, so a change to the source file cannot
# silently leave a path pointing nowhere.

# GNUInstallDirs' rule: the prefix /usr keeps its configuration in /etc.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(sysconfdir /etc)
else()
  set(sysconfdir ${CMAKE_INSTALL_PREFIX}/etc)
endif()
set(sbindir ${CMAKE_INSTALL_PREFIX}/${PORTICO_SBINDIR})
set(datadir ${CMAKE_INSTALL_PREFIX}/${PORTICO_DATADIR})
set(docdir ${CMAKE_INSTALL_PREFIX}/${PORTICO_DOCDIR})

# Written in a folder of this destination's own: cpack and `cmake --install`
# may run at once from one build folder (the package tests do).
string(MD5 destination "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(written_dir ${PORTICO_WRITTEN_DIR}/${destination})

# install_rewritten(SOURCE DESTINATION_FOLDER [HEADER text] [FROM TO]...)
function(install_rewritten source folder)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "HEADER" "")
  file(READ ${PORTICO_SOURCE_DIR}/${source} text)
  set(pairs ${arg_UNPARSED_ARGUMENTS})
  while(pairs)
    list(POP_FRONT pairs from to)
    string(FIND "${text}" "${from}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${source} no longer contains '${from}': update cmake/install_with_paths.cmake")
    endif()
    string(REPLACE "${from}" "${to}" text "${text}")
  endwhile()
  get_filename_component(name ${source} NAME)
  file(WRITE ${written_dir}/${name} "${arg_HEADER}${text}")
  file(INSTALL DESTINATION ${folder} TYPE FILE FILES ${written_dir}/${name})
endfunction()

install_rewritten(conf/portico.toml ${sysconfdir}/portico
  HEADER "# Installed from portico's conf/portico.toml, with its paths made absolute:\n# static files from ${datadir}/portico/www, logs in /var/log/portico\n# (${sysconfdir}/logrotate.d/portico rotates them). Everything else is\n# proxied to [upstream.app]: point it at your app.\n\n"
  "root = \"../www\"" "root = \"${datadir}/portico/www\""
  "error = \"stderr\"" "error = \"/var/log/portico/error.log\""
  "access = \"off\"" "access = \"/var/log/portico/access.log\"")
# systemd reads units from PREFIX/lib/systemd/system for /usr and /usr/local.
install_rewritten(deploy/systemd/portico.service ${CMAKE_INSTALL_PREFIX}/lib/systemd/system
  "/usr/sbin/portico" "${sbindir}/portico"
  "/etc/portico/portico.toml" "${sysconfdir}/portico/portico.toml"
  "/usr/share/doc/portico" "${docdir}")
install_rewritten(deploy/logrotate/portico ${sysconfdir}/logrotate.d)
file(REMOVE_RECURSE ${written_dir})
