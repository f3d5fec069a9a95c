# Unity batches by folder: chaosbench_unity_by_folder(TARGET) puts each of TARGET's .cc
# sources in a batch with the files of its own folder only, at most
# CHAOSBENCH_UNITY_BATCH_SIZE a batch, in name order. So a file that moves or is added
# changes only its folder's batches, and names at namespace scope in a .cc file must be
# unique within its folder, not within its library (scripts/unity_names.py checks it;
# an alias to the same type may repeat). Sources with compile options of their own stay
# out of batches, as CMake does for them. Without CMAKE_UNITY_BUILD it does nothing.
set(CHAOSBENCH_UNITY_BATCH_SIZE 12 CACHE STRING "Source files per unity batch (per folder)")

function(chaosbench_unity_by_folder target)
  if(NOT CMAKE_UNITY_BUILD)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(folders "")
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.cc$")
      continue()
    endif()
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    get_filename_component(folder "${path}" DIRECTORY)
    list(APPEND folders "${folder}")
    list(APPEND "files_${folder}" "${path}")
  endforeach()
  list(REMOVE_DUPLICATES folders)
  foreach(folder IN LISTS folders)
    set(files ${files_${folder}})
    list(SORT files)
    file(RELATIVE_PATH group "${PROJECT_SOURCE_DIR}" "${folder}")
    string(MAKE_C_IDENTIFIER "${group}" group)
    set(index 0)
    foreach(path IN LISTS files)
      math(EXPR batch "${index} / ${CHAOSBENCH_UNITY_BATCH_SIZE}")
      set_source_files_properties("${path}" TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP "${group}_${batch}")
      math(EXPR index "${index} + 1")
    endforeach()
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD_MODE GROUP)
endfunction()
