# GUARDFS_SANITIZE=ON builds everything (the daemon too) with AddressSanitizer and
# UndefinedBehaviorSanitizer, stopping at the first report. Style guide B.10, the `asan` build.
option(GUARDFS_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(GUARDFS_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=all)
    add_link_options(-fsanitize=address,undefined)
endif()
