# Warnings for guardfs's own targets only. Third-party headers arrive through imported
# targets (SYSTEM includes), so -Werror never fires on them. Style guide B.10.
function(guardfs_warnings target)
    target_compile_options(${target} PRIVATE
        -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast
        -Wnon-virtual-dtor -Woverloaded-virtual -Wdouble-promotion -Wformat=2
        -Wimplicit-fallthrough -Wcast-align -Wmisleading-indentation -Werror)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
        # GCC 12 at -O3 (CMAKE_BUILD_TYPE=Release) reports -Wrestrict inside libstdc++ for
        # `"literal" + std::string` (GCC bug 105329, fixed in 13); the code is fine.
        target_compile_options(${target} PRIVATE -Wno-restrict)
    endif()
    target_compile_definitions(${target} PRIVATE _FILE_OFFSET_BITS=64)
endfunction()
