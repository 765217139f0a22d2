# `cpack -G DEB` in the build folder: a .deb of the same install rules with
# the prefix /usr (tests/package/deb_package_test.sh builds and installs it).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME portico)
set(CPACK_PACKAGE_VENDOR portico)
set(CPACK_PACKAGE_CONTACT "portico maintainers <portico@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "reverse proxy and static file server with built-in counters")
set(CPACK_PACKAGE_DESCRIPTION
    "portico answers from disk or forwards to an app server, location by location, and its
counters show what each choice costs. Runs as a systemd service (user portico).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
# The config and the logrotate file go to /etc, outside the prefix: the
# install then runs with DESTDIR set to the staging folder.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION httpd)
# The libraries' packages (libuv1, libre2-9, libspdlog1.10, ...) come from
# dpkg-shlibdeps; the maintainer scripts' own needs are added here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "logrotate")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
    ${PROJECT_SOURCE_DIR}/deploy/debian/postrm
    ${PROJECT_SOURCE_DIR}/deploy/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
