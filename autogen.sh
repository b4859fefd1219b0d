#!/bin/sh
# Regenerate the build system.
exec autoreconf -fi
