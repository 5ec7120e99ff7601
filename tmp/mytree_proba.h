


    // !!! This file is generated using emlearn !!!

    #include <stdint.h>
    

static inline int32_t mytree_tree_0(const int16_t *features, int32_t features_length) {
          if (features[20] < 5) {
              if (features[61] < 9) {
                  if (features[30] < 1) {
                      if (features[9] < 3) {
                          if (features[21] < 1) {
                              if (features[61] < 6) {
                                  return 5;
                              } else {
                                  return 6;
                              }
                          } else {
                              if (features[60] < 7) {
                                  return 7;
                              } else {
                                  return 8;
                              }
                          }
                      } else {
                          if (features[11] < 6) {
                              if (features[35] < 1) {
                                  return 2;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[20] < 4) {
                                  return 5;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  } else {
                      if (features[35] < 1) {
                          if (features[25] < 1) {
                              if (features[50] < 14) {
                                  return 0;
                              } else {
                                  return 4;
                              }
                          } else {
                              if (features[43] < 11) {
                                  return 0;
                              } else {
                                  return 4;
                              }
                          }
                      } else {
                          if (features[44] < 14) {
                              if (features[5] < 10) {
                                  return 4;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[13] < 4) {
                                  return 4;
                              } else {
                                  return 7;
                              }
                          }
                      }
                  }
              } else {
                  if (features[30] < 0) {
                      if (features[52] < 13) {
                          if (features[14] < 0) {
                              if (features[34] < 9) {
                                  return 8;
                              } else {
                                  return 6;
                              }
                          } else {
                              if (features[13] < 14) {
                                  return 8;
                              } else {
                                  return 2;
                              }
                          }
                      } else {
                          return 1;
                      }
                  } else {
                      if (features[28] < 1) {
                          if (features[46] < 3) {
                              return 2;
                          } else {
                              return 0;
                          }
                      } else {
                          if (features[20] < 0) {
                              if (features[9] < 3) {
                                  return 8;
                              } else {
                                  return 0;
                              }
                          } else {
                              if (features[63] < 4) {
                                  return 9;
                              } else {
                                  return 2;
                              }
                          }
                      }
                  }
              }
          } else {
              if (features[44] < 2) {
                  if (features[21] < 11) {
                      if (features[35] < 11) {
                          if (features[18] < 11) {
                              if (features[2] < 14) {
                                  return 3;
                              } else {
                                  return 2;
                              }
                          } else {
                              if (features[26] < 9) {
                                  return 3;
                              } else {
                                  return 5;
                              }
                          }
                      } else {
                          if (features[46] < 10) {
                              if (features[54] < 0) {
                                  return 7;
                              } else {
                                  return 2;
                              }
                          } else {
                              return 6;
                          }
                      }
                  } else {
                      if (features[45] < 1) {
                          return 7;
                      } else {
                          if (features[42] < 9) {
                              if (features[36] < 4) {
                                  return 9;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[33] < 2) {
                                  return 3;
                              } else {
                                  return 0;
                              }
                          }
                      }
                  }
              } else {
                  if (features[10] < 7) {
                      if (features[41] < 3) {
                          if (features[49] < 1) {
                              if (features[34] < 6) {
                                  return 1;
                              } else {
                                  return 1;
                              }
                          } else {
                              return 8;
                          }
                      } else {
                          if (features[33] < 3) {
                              if (features[21] < 6) {
                                  return 4;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[26] < 4) {
                                  return 7;
                              } else {
                                  return 4;
                              }
                          }
                      }
                  } else {
                      if (features[53] < 3) {
                          if (features[21] < 4) {
                              if (features[58] < 8) {
                                  return 1;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[37] < 3) {
                                  return 8;
                              } else {
                                  return 7;
                              }
                          }
                      } else {
                          if (features[62] < 2) {
                              if (features[42] < 8) {
                                  return 3;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[37] < 11) {
                                  return 2;
                              } else {
                                  return 1;
                              }
                          }
                      }
                  }
              }
          }
        }
        

static inline int32_t mytree_tree_1(const int16_t *features, int32_t features_length) {
          if (features[34] < 5) {
              if (features[19] < 14) {
                  if (features[51] < 11) {
                      if (features[30] < 0) {
                          if (features[35] < 15) {
                              if (features[6] < 4) {
                                  return 3;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[2] < 9) {
                                  return 8;
                              } else {
                                  return 3;
                              }
                          }
                      } else {
                          if (features[44] < 4) {
                              if (features[33] < 1) {
                                  return 9;
                              } else {
                                  return 0;
                              }
                          } else {
                              if (features[27] < 8) {
                                  return 7;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  } else {
                      if (features[54] < 0) {
                          if (features[61] < 5) {
                              if (features[21] < 6) {
                                  return 5;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[17] < 2) {
                                  return 2;
                              } else {
                                  return 8;
                              }
                          }
                      } else {
                          if (features[2] < 3) {
                              if (features[20] < 8) {
                                  return 8;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[2] < 4) {
                                  return 2;
                              } else {
                                  return 2;
                              }
                          }
                      }
                  }
              } else {
                  if (features[49] < 0) {
                      if (features[4] < 14) {
                          if (features[36] < 0) {
                              return 9;
                          } else {
                              if (features[14] < 5) {
                                  return 1;
                              } else {
                                  return 1;
                              }
                          }
                      } else {
                          if (features[21] < 2) {
                              return 5;
                          } else {
                              if (features[44] < 13) {
                                  return 9;
                              } else {
                                  return 1;
                              }
                          }
                      }
                  } else {
                      if (features[10] < 14) {
                          return 8;
                      } else {
                          return 9;
                      }
                  }
              }
          } else {
              if (features[36] < 0) {
                  if (features[45] < 0) {
                      if (features[52] < 11) {
                          return 8;
                      } else {
                          if (features[19] < 8) {
                              return 5;
                          } else {
                              return 2;
                          }
                      }
                  } else {
                      if (features[41] < 0) {
                          if (features[50] < 8) {
                              return 5;
                          } else {
                              if (features[14] < 3) {
                                  return 0;
                              } else {
                                  return 5;
                              }
                          }
                      } else {
                          if (features[18] < 3) {
                              return 4;
                          } else {
                              if (features[13] < 1) {
                                  return 6;
                              } else {
                                  return 0;
                              }
                          }
                      }
                  }
              } else {
                  if (features[13] < 3) {
                      if (features[54] < 1) {
                          if (features[44] < 7) {
                              if (features[5] < 5) {
                                  return 6;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[37] < 6) {
                                  return 5;
                              } else {
                                  return 4;
                              }
                          }
                      } else {
                          if (features[50] < 15) {
                              if (features[17] < 7) {
                                  return 6;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[11] < 12) {
                                  return 6;
                              } else {
                                  return 2;
                              }
                          }
                      }
                  } else {
                      if (features[19] < 13) {
                          if (features[21] < 1) {
                              if (features[61] < 11) {
                                  return 5;
                              } else {
                                  return 6;
                              }
                          } else {
                              if (features[37] < 2) {
                                  return 8;
                              } else {
                                  return 7;
                              }
                          }
                      } else {
                          if (features[12] < 15) {
                              if (features[10] < 6) {
                                  return 6;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[36] < 7) {
                                  return 8;
                              } else {
                                  return 1;
                              }
                          }
                      }
                  }
              }
          }
        }
        

static inline int32_t mytree_tree_2(const int16_t *features, int32_t features_length) {
          if (features[21] < 1) {
              if (features[61] < 8) {
                  if (features[25] < 1) {
                      if (features[2] < 3) {
                          if (features[28] < 9) {
                              if (features[61] < 7) {
                                  return 4;
                              } else {
                                  return 6;
                              }
                          } else {
                              if (features[37] < 6) {
                                  return 1;
                              } else {
                                  return 4;
                              }
                          }
                      } else {
                          if (features[5] < 5) {
                              if (features[26] < 1) {
                                  return 2;
                              } else {
                                  return 7;
                              }
                          } else {
                              return 5;
                          }
                      }
                  } else {
                      if (features[41] < 1) {
                          if (features[10] < 9) {
                              if (features[33] < 3) {
                                  return 3;
                              } else {
                                  return 4;
                              }
                          } else {
                              if (features[10] < 11) {
                                  return 5;
                              } else {
                                  return 5;
                              }
                          }
                      } else {
                          if (features[35] < 7) {
                              if (features[2] < 5) {
                                  return 4;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[33] < 4) {
                                  return 7;
                              } else {
                                  return 4;
                              }
                          }
                      }
                  }
              } else {
                  if (features[63] < 2) {
                      if (features[10] < 13) {
                          if (features[58] < 7) {
                              if (features[61] < 10) {
                                  return 6;
                              } else {
                                  return 6;
                              }
                          } else {
                              if (features[63] < 0) {
                                  return 3;
                              } else {
                                  return 2;
                              }
                          }
                      } else {
                          if (features[2] < 5) {
                              return 8;
                          } else {
                              if (features[37] < 5) {
                                  return 2;
                              } else {
                                  return 5;
                              }
                          }
                      }
                  } else {
                      if (features[37] < 1) {
                          if (features[20] < 7) {
                              return 1;
                          } else {
                              return 2;
                          }
                      } else {
                          return 1;
                      }
                  }
              }
          } else {
              if (features[33] < 3) {
                  if (features[60] < 5) {
                      if (features[12] < 3) {
                          if (features[28] < 10) {
                              return 9;
                          } else {
                              if (features[5] < 6) {
                                  return 4;
                              } else {
                                  return 7;
                              }
                          }
                      } else {
                          if (features[52] < 11) {
                              if (features[34] < 2) {
                                  return 7;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[26] < 9) {
                                  return 8;
                              } else {
                                  return 5;
                              }
                          }
                      }
                  } else {
                      if (features[43] < 1) {
                          if (features[25] < 0) {
                              if (features[29] < 12) {
                                  return 3;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[33] < 2) {
                                  return 9;
                              } else {
                                  return 8;
                              }
                          }
                      } else {
                          if (features[9] < 7) {
                              if (features[12] < 15) {
                                  return 8;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[26] < 11) {
                                  return 2;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  }
              } else {
                  if (features[46] < 4) {
                      if (features[58] < 0) {
                          if (features[5] < 11) {
                              if (features[5] < 3) {
                                  return 4;
                              } else {
                                  return 4;
                              }
                          } else {
                              if (features[26] < 9) {
                                  return 7;
                              } else {
                                  return 1;
                              }
                          }
                      } else {
                          if (features[18] < 4) {
                              return 7;
                          } else {
                              if (features[45] < 10) {
                                  return 4;
                              } else {
                                  return 0;
                              }
                          }
                      }
                  } else {
                      if (features[11] < 5) {
                          return 5;
                      } else {
                          if (features[28] < 9) {
                              return 0;
                          } else {
                              return 4;
                          }
                      }
                  }
              }
          }
        }
        

static inline int32_t mytree_tree_3(const int16_t *features, int32_t features_length) {
          if (features[34] < 2) {
              if (features[27] < 10) {
                  if (features[14] < 0) {
                      if (features[38] < 0) {
                          if (features[43] < 1) {
                              if (features[35] < 1) {
                                  return 1;
                              } else {
                                  return 3;
                              }
                          } else {
                              if (features[5] < 8) {
                                  return 2;
                              } else {
                                  return 3;
                              }
                          }
                      } else {
                          if (features[20] < 5) {
                              if (features[28] < 4) {
                                  return 2;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[34] < 1) {
                                  return 3;
                              } else {
                                  return 9;
                              }
                          }
                      }
                  } else {
                      if (features[61] < 0) {
                          if (features[18] < 0) {
                              return 3;
                          } else {
                              if (features[43] < 1) {
                                  return 9;
                              } else {
                                  return 7;
                              }
                          }
                      } else {
                          if (features[61] < 14) {
                              if (features[53] < 14) {
                                  return 2;
                              } else {
                                  return 3;
                              }
                          } else {
                              if (features[20] < 6) {
                                  return 3;
                              } else {
                                  return 1;
                              }
                          }
                      }
                  }
              } else {
                  if (features[62] < 12) {
                      if (features[59] < 15) {
                          if (features[36] < 6) {
                              if (features[3] < 8) {
                                  return 5;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[10] < 9) {
                                  return 1;
                              } else {
                                  return 9;
                              }
                          }
                      } else {
                          if (features[45] < 8) {
                              if (features[62] < 2) {
                                  return 5;
                              } else {
                                  return 2;
                              }
                          } else {
                              if (features[26] < 5) {
                                  return 3;
                              } else {
                                  return 5;
                              }
                          }
                      }
                  } else {
                      return 1;
                  }
              }
          } else {
              if (features[35] < 1) {
                  if (features[28] < 5) {
                      if (features[3] < 6) {
                          if (features[60] < 9) {
                              return 0;
                          } else {
                              return 4;
                          }
                      } else {
                          if (features[36] < 1) {
                              return 0;
                          } else {
                              if (features[61] < 1) {
                                  return 7;
                              } else {
                                  return 4;
                              }
                          }
                      }
                  } else {
                      if (features[61] < 10) {
                          if (features[18] < 7) {
                              return 4;
                          } else {
                              if (features[51] < 10) {
                                  return 5;
                              } else {
                                  return 4;
                              }
                          }
                      } else {
                          return 1;
                      }
                  }
              } else {
                  if (features[42] < 10) {
                      if (features[30] < 0) {
                          if (features[18] < 10) {
                              if (features[27] < 15) {
                                  return 3;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[58] < 3) {
                                  return 8;
                              } else {
                                  return 5;
                              }
                          }
                      } else {
                          if (features[25] < 1) {
                              if (features[51] < 0) {
                                  return 1;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[13] < 5) {
                                  return 4;
                              } else {
                                  return 9;
                              }
                          }
                      }
                  } else {
                      if (features[13] < 7) {
                          if (features[41] < 4) {
                              if (features[54] < 3) {
                                  return 4;
                              } else {
                                  return 6;
                              }
                          } else {
                              if (features[58] < 0) {
                                  return 4;
                              } else {
                                  return 4;
                              }
                          }
                      } else {
                          if (features[50] < 6) {
                              if (features[17] < 0) {
                                  return 7;
                              } else {
                                  return 0;
                              }
                          } else {
                              if (features[36] < 0) {
                                  return 0;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  }
              }
          }
        }
        

static inline int32_t mytree_tree_4(const int16_t *features, int32_t features_length) {
          if (features[33] < 3) {
              if (features[34] < 2) {
                  if (features[51] < 11) {
                      if (features[36] < 7) {
                          if (features[59] < 2) {
                              return 1;
                          } else {
                              if (features[29] < 11) {
                                  return 5;
                              } else {
                                  return 9;
                              }
                          }
                      } else {
                          if (features[30] < 0) {
                              if (features[19] < 10) {
                                  return 3;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[35] < 8) {
                                  return 9;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  } else {
                      if (features[27] < 9) {
                          if (features[38] < 0) {
                              if (features[52] < 4) {
                                  return 7;
                              } else {
                                  return 2;
                              }
                          } else {
                              if (features[54] < 1) {
                                  return 7;
                              } else {
                                  return 3;
                              }
                          }
                      } else {
                          if (features[10] < 7) {
                              return 1;
                          } else {
                              if (features[21] < 7) {
                                  return 2;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  }
              } else {
                  if (features[13] < 1) {
                      if (features[42] < 7) {
                          if (features[37] < 3) {
                              if (features[49] < 4) {
                                  return 1;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[19] < 2) {
                                  return 4;
                              } else {
                                  return 3;
                              }
                          }
                      } else {
                          if (features[2] < 6) {
                              return 6;
                          } else {
                              if (features[52] < 9) {
                                  return 2;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  } else {
                      if (features[25] < 2) {
                          if (features[60] < 5) {
                              if (features[18] < 15) {
                                  return 7;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[12] < 15) {
                                  return 8;
                              } else {
                                  return 1;
                              }
                          }
                      } else {
                          if (features[42] < 4) {
                              if (features[58] < 6) {
                                  return 9;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[35] < 5) {
                                  return 0;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  }
              }
          } else {
              if (features[35] < 0) {
                  if (features[41] < 9) {
                      if (features[1] < 3) {
                          if (features[20] < 14) {
                              if (features[60] < 7) {
                                  return 0;
                              } else {
                                  return 0;
                              }
                          } else {
                              return 4;
                          }
                      } else {
                          return 5;
                      }
                  } else {
                      return 4;
                  }
              } else {
                  if (features[62] < 0) {
                      if (features[10] < 6) {
                          if (features[26] < 10) {
                              if (features[10] < 1) {
                                  return 1;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[61] < 10) {
                                  return 4;
                              } else {
                                  return 1;
                              }
                          }
                      } else {
                          if (features[29] < 6) {
                              if (features[5] < 7) {
                                  return 6;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[45] < 9) {
                                  return 4;
                              } else {
                                  return 0;
                              }
                          }
                      }
                  } else {
                      if (features[50] < 6) {
                          if (features[20] < 5) {
                              if (features[10] < 7) {
                                  return 6;
                              } else {
                                  return 5;
                              }
                          } else {
                              return 1;
                          }
                      } else {
                          if (features[20] < 11) {
                              if (features[9] < 1) {
                                  return 6;
                              } else {
                                  return 0;
                              }
                          } else {
                              return 1;
                          }
                      }
                  }
              }
          }
        }
        

static inline int32_t mytree_tree_5(const int16_t *features, int32_t features_length) {
          if (features[36] < 0) {
              if (features[34] < 3) {
                  if (features[55] < 3) {
                      if (features[25] < 1) {
                          if (features[5] < 13) {
                              return 9;
                          } else {
                              if (features[2] < 4) {
                                  return 9;
                              } else {
                                  return 3;
                              }
                          }
                      } else {
                          if (features[9] < 2) {
                              return 5;
                          } else {
                              if (features[4] < 12) {
                                  return 5;
                              } else {
                                  return 9;
                              }
                          }
                      }
                  } else {
                      return 2;
                  }
              } else {
                  if (features[21] < 7) {
                      if (features[13] < 8) {
                          if (features[26] < 7) {
                              return 4;
                          } else {
                              if (features[5] < 7) {
                                  return 6;
                              } else {
                                  return 5;
                              }
                          }
                      } else {
                          if (features[11] < 10) {
                              if (features[52] < 4) {
                                  return 8;
                              } else {
                                  return 5;
                              }
                          } else {
                              return 0;
                          }
                      }
                  } else {
                      if (features[53] < 3) {
                          if (features[21] < 12) {
                              return 5;
                          } else {
                              return 8;
                          }
                      } else {
                          if (features[28] < 7) {
                              if (features[5] < 12) {
                                  return 0;
                              } else {
                                  return 9;
                              }
                          } else {
                              return 5;
                          }
                      }
                  }
              }
          } else {
              if (features[53] < 0) {
                  if (features[11] < 14) {
                      if (features[25] < 1) {
                          if (features[3] < 8) {
                              if (features[10] < 4) {
                                  return 4;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[29] < 1) {
                                  return 8;
                              } else {
                                  return 7;
                              }
                          }
                      } else {
                          if (features[4] < 9) {
                              return 4;
                          } else {
                              if (features[18] < 3) {
                                  return 7;
                              } else {
                                  return 9;
                              }
                          }
                      }
                  } else {
                      if (features[6] < 5) {
                          if (features[20] < 11) {
                              if (features[36] < 14) {
                                  return 5;
                              } else {
                                  return 4;
                              }
                          } else {
                              if (features[60] < 3) {
                                  return 7;
                              } else {
                                  return 1;
                              }
                          }
                      } else {
                          if (features[18] < 15) {
                              return 7;
                          } else {
                              return 9;
                          }
                      }
                  }
              } else {
                  if (features[33] < 1) {
                      if (features[43] < 1) {
                          if (features[18] < 9) {
                              if (features[19] < 10) {
                                  return 3;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[60] < 11) {
                                  return 5;
                              } else {
                                  return 9;
                              }
                          }
                      } else {
                          if (features[38] < 1) {
                              if (features[45] < 6) {
                                  return 2;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[43] < 6) {
                                  return 3;
                              } else {
                                  return 6;
                              }
                          }
                      }
                  } else {
                      if (features[5] < 10) {
                          if (features[10] < 5) {
                              if (features[44] < 2) {
                                  return 6;
                              } else {
                                  return 4;
                              }
                          } else {
                              if (features[12] < 13) {
                                  return 6;
                              } else {
                                  return 8;
                              }
                          }
                      } else {
                          if (features[61] < 10) {
                              if (features[22] < 0) {
                                  return 5;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[51] < 11) {
                                  return 1;
                              } else {
                                  return 2;
                              }
                          }
                      }
                  }
              }
          }
        }
        

static inline int32_t mytree_tree_6(const int16_t *features, int32_t features_length) {
          if (features[28] < 2) {
              if (features[30] < 1) {
                  if (features[42] < 9) {
                      if (features[2] < 6) {
                          if (features[26] < 8) {
                              return 6;
                          } else {
                              return 3;
                          }
                      } else {
                          if (features[36] < 15) {
                              return 5;
                          } else {
                              return 3;
                          }
                      }
                  } else {
                      if (features[17] < 5) {
                          if (features[53] < 2) {
                              return 4;
                          } else {
                              if (features[14] < 2) {
                                  return 6;
                              } else {
                                  return 8;
                              }
                          }
                      } else {
                          if (features[4] < 15) {
                              return 0;
                          } else {
                              return 5;
                          }
                      }
                  }
              } else {
                  if (features[30] < 8) {
                      if (features[58] < 0) {
                          if (features[21] < 9) {
                              if (features[5] < 10) {
                                  return 4;
                              } else {
                                  return 7;
                              }
                          } else {
                              return 0;
                          }
                      } else {
                          if (features[43] < 9) {
                              if (features[50] < 4) {
                                  return 7;
                              } else {
                                  return 0;
                              }
                          } else {
                              if (features[11] < 15) {
                                  return 2;
                              } else {
                                  return 0;
                              }
                          }
                      }
                  } else {
                      if (features[44] < 6) {
                          return 0;
                      } else {
                          return 4;
                      }
                  }
              }
          } else {
              if (features[10] < 8) {
                  if (features[25] < 1) {
                      if (features[46] < 8) {
                          if (features[19] < 8) {
                              if (features[30] < 0) {
                                  return 3;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[41] < 2) {
                                  return 1;
                              } else {
                                  return 2;
                              }
                          }
                      } else {
                          if (features[29] < 9) {
                              if (features[44] < 11) {
                                  return 6;
                              } else {
                                  return 4;
                              }
                          } else {
                              if (features[11] < 13) {
                                  return 3;
                              } else {
                                  return 6;
                              }
                          }
                      }
                  } else {
                      if (features[61] < 8) {
                          if (features[5] < 12) {
                              if (features[20] < 15) {
                                  return 4;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[34] < 13) {
                                  return 9;
                              } else {
                                  return 7;
                              }
                          }
                      } else {
                          if (features[46] < 5) {
                              if (features[42] < 2) {
                                  return 1;
                              } else {
                                  return 1;
                              }
                          } else {
                              return 6;
                          }
                      }
                  }
              } else {
                  if (features[36] < 4) {
                      if (features[45] < 0) {
                          if (features[13] < 13) {
                              if (features[62] < 1) {
                                  return 1;
                              } else {
                                  return 2;
                              }
                          } else {
                              return 8;
                          }
                      } else {
                          if (features[2] < 6) {
                              if (features[26] < 0) {
                                  return 3;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[30] < 1) {
                                  return 5;
                              } else {
                                  return 9;
                              }
                          }
                      }
                  } else {
                      if (features[18] < 6) {
                          if (features[61] < 0) {
                              if (features[27] < 2) {
                                  return 7;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[51] < 11) {
                                  return 3;
                              } else {
                                  return 2;
                              }
                          }
                      } else {
                          if (features[51] < 13) {
                              if (features[28] < 13) {
                                  return 5;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[2] < 6) {
                                  return 7;
                              } else {
                                  return 2;
                              }
                          }
                      }
                  }
              }
          }
        }
        

static inline int32_t mytree_tree_7(const int16_t *features, int32_t features_length) {
          if (features[19] < 12) {
              if (features[53] < 0) {
                  if (features[42] < 15) {
                      if (features[38] < 0) {
                          if (features[42] < 11) {
                              if (features[17] < 2) {
                                  return 7;
                              } else {
                                  return 5;
                              }
                          } else {
                              return 8;
                          }
                      } else {
                          if (features[46] < 8) {
                              if (features[4] < 6) {
                                  return 4;
                              } else {
                                  return 7;
                              }
                          } else {
                              return 9;
                          }
                      }
                  } else {
                      if (features[5] < 5) {
                          return 4;
                      } else {
                          return 7;
                      }
                  }
              } else {
                  if (features[28] < 0) {
                      if (features[13] < 2) {
                          if (features[46] < 0) {
                              if (features[41] < 3) {
                                  return 5;
                              } else {
                                  return 4;
                              }
                          } else {
                              return 6;
                          }
                      } else {
                          if (features[50] < 4) {
                              if (features[11] < 10) {
                                  return 2;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[34] < 2) {
                                  return 2;
                              } else {
                                  return 0;
                              }
                          }
                      }
                  } else {
                      if (features[13] < 6) {
                          if (features[37] < 6) {
                              if (features[5] < 1) {
                                  return 2;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[6] < 0) {
                                  return 6;
                              } else {
                                  return 5;
                              }
                          }
                      } else {
                          if (features[30] < 0) {
                              if (features[20] < 1) {
                                  return 5;
                              } else {
                                  return 3;
                              }
                          } else {
                              if (features[58] < 6) {
                                  return 9;
                              } else {
                                  return 9;
                              }
                          }
                      }
                  }
              }
          } else {
              if (features[27] < 15) {
                  if (features[30] < 4) {
                      if (features[33] < 3) {
                          if (features[49] < 0) {
                              if (features[13] < 0) {
                                  return 6;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[35] < 12) {
                                  return 9;
                              } else {
                                  return 8;
                              }
                          }
                      } else {
                          if (features[3] < 8) {
                              if (features[61] < 10) {
                                  return 4;
                              } else {
                                  return 6;
                              }
                          } else {
                              if (features[4] < 12) {
                                  return 0;
                              } else {
                                  return 6;
                              }
                          }
                      }
                  } else {
                      if (features[34] < 13) {
                          if (features[29] < 11) {
                              return 0;
                          } else {
                              if (features[11] < 14) {
                                  return 1;
                              } else {
                                  return 9;
                              }
                          }
                      } else {
                          if (features[58] < 1) {
                              return 4;
                          } else {
                              if (features[49] < 6) {
                                  return 0;
                              } else {
                                  return 4;
                              }
                          }
                      }
                  }
              } else {
                  if (features[44] < 12) {
                      if (features[44] < 3) {
                          if (features[35] < 8) {
                              return 9;
                          } else {
                              if (features[53] < 2) {
                                  return 1;
                              } else {
                                  return 6;
                              }
                          }
                      } else {
                          if (features[51] < 15) {
                              if (features[50] < 10) {
                                  return 1;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[9] < 2) {
                                  return 1;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  } else {
                      if (features[4] < 13) {
                          if (features[10] < 14) {
                              if (features[26] < 14) {
                                  return 1;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[3] < 11) {
                                  return 1;
                              } else {
                                  return 8;
                              }
                          }
                      } else {
                          if (features[34] < 14) {
                              if (features[29] < 2) {
                                  return 8;
                              } else {
                                  return 1;
                              }
                          } else {
                              return 4;
                          }
                      }
                  }
              }
          }
        }
        

static inline int32_t mytree_tree_8(const int16_t *features, int32_t features_length) {
          if (features[36] < 0) {
              if (features[5] < 8) {
                  if (features[41] < 0) {
                      if (features[52] < 5) {
                          if (features[21] < 6) {
                              if (features[10] < 11) {
                                  return 9;
                              } else {
                                  return 5;
                              }
                          } else {
                              return 9;
                          }
                      } else {
                          if (features[19] < 9) {
                              if (features[18] < 5) {
                                  return 2;
                              } else {
                                  return 0;
                              }
                          } else {
                              if (features[26] < 7) {
                                  return 9;
                              } else {
                                  return 6;
                              }
                          }
                      }
                  } else {
                      if (features[10] < 0) {
                          return 4;
                      } else {
                          if (features[37] < 1) {
                              if (features[44] < 8) {
                                  return 2;
                              } else {
                                  return 6;
                              }
                          } else {
                              return 0;
                          }
                      }
                  }
              } else {
                  if (features[21] < 13) {
                      if (features[20] < 0) {
                          if (features[30] < 6) {
                              return 5;
                          } else {
                              return 0;
                          }
                      } else {
                          if (features[25] < 1) {
                              return 8;
                          } else {
                              return 5;
                          }
                      }
                  } else {
                      if (features[38] < 2) {
                          return 8;
                      } else {
                          return 9;
                      }
                  }
              }
          } else {
              if (features[38] < 0) {
                  if (features[10] < 8) {
                      if (features[52] < 7) {
                          if (features[28] < 4) {
                              return 6;
                          } else {
                              if (features[4] < 7) {
                                  return 7;
                              } else {
                                  return 8;
                              }
                          }
                      } else {
                          if (features[30] < 1) {
                              if (features[34] < 12) {
                                  return 1;
                              } else {
                                  return 1;
                              }
                          } else {
                              if (features[43] < 0) {
                                  return 9;
                              } else {
                                  return 4;
                              }
                          }
                      }
                  } else {
                      if (features[20] < 3) {
                          if (features[61] < 7) {
                              if (features[2] < 5) {
                                  return 8;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[33] < 0) {
                                  return 8;
                              } else {
                                  return 6;
                              }
                          }
                      } else {
                          if (features[18] < 3) {
                              if (features[42] < 0) {
                                  return 3;
                              } else {
                                  return 2;
                              }
                          } else {
                              if (features[19] < 14) {
                                  return 2;
                              } else {
                                  return 1;
                              }
                          }
                      }
                  }
              } else {
                  if (features[26] < 9) {
                      if (features[54] < 0) {
                          if (features[45] < 15) {
                              if (features[17] < 7) {
                                  return 7;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[12] < 12) {
                                  return 7;
                              } else {
                                  return 4;
                              }
                          }
                      } else {
                          if (features[21] < 11) {
                              if (features[36] < 2) {
                                  return 9;
                              } else {
                                  return 3;
                              }
                          } else {
                              if (features[9] < 5) {
                                  return 9;
                              } else {
                                  return 3;
                              }
                          }
                      }
                  } else {
                      if (features[54] < 0) {
                          if (features[34] < 7) {
                              if (features[30] < 2) {
                                  return 5;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[2] < 5) {
                                  return 4;
                              } else {
                                  return 5;
                              }
                          }
                      } else {
                          if (features[28] < 8) {
                              if (features[50] < 5) {
                                  return 5;
                              } else {
                                  return 6;
                              }
                          } else {
                              if (features[29] < 12) {
                                  return 5;
                              } else {
                                  return 9;
                              }
                          }
                      }
                  }
              }
          }
        }
        

static inline int32_t mytree_tree_9(const int16_t *features, int32_t features_length) {
          if (features[30] < 0) {
              if (features[20] < 3) {
                  if (features[42] < 10) {
                      if (features[4] < 1) {
                          return 1;
                      } else {
                          if (features[26] < 4) {
                              if (features[35] < 10) {
                                  return 3;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[29] < 9) {
                                  return 5;
                              } else {
                                  return 5;
                              }
                          }
                      }
                  } else {
                      if (features[61] < 3) {
                          return 4;
                      } else {
                          if (features[13] < 10) {
                              if (features[42] < 12) {
                                  return 6;
                              } else {
                                  return 6;
                              }
                          } else {
                              if (features[29] < 12) {
                                  return 8;
                              } else {
                                  return 0;
                              }
                          }
                      }
                  }
              } else {
                  if (features[9] < 0) {
                      if (features[10] < 10) {
                          if (features[19] < 6) {
                              if (features[11] < 11) {
                                  return 3;
                              } else {
                                  return 7;
                              }
                          } else {
                              if (features[46] < 0) {
                                  return 1;
                              } else {
                                  return 4;
                              }
                          }
                      } else {
                          if (features[34] < 0) {
                              if (features[60] < 15) {
                                  return 2;
                              } else {
                                  return 3;
                              }
                          } else {
                              if (features[21] < 3) {
                                  return 1;
                              } else {
                                  return 8;
                              }
                          }
                      }
                  } else {
                      if (features[43] < 3) {
                          if (features[54] < 0) {
                              if (features[21] < 5) {
                                  return 5;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[25] < 1) {
                                  return 3;
                              } else {
                                  return 9;
                              }
                          }
                      } else {
                          if (features[45] < 11) {
                              if (features[35] < 15) {
                                  return 2;
                              } else {
                                  return 2;
                              }
                          } else {
                              if (features[1] < 1) {
                                  return 8;
                              } else {
                                  return 2;
                              }
                          }
                      }
                  }
              }
          } else {
              if (features[44] < 7) {
                  if (features[33] < 2) {
                      if (features[5] < 12) {
                          if (features[21] < 7) {
                              if (features[45] < 2) {
                                  return 7;
                              } else {
                                  return 5;
                              }
                          } else {
                              if (features[61] < 2) {
                                  return 0;
                              } else {
                                  return 9;
                              }
                          }
                      } else {
                          if (features[36] < 11) {
                              if (features[28] < 10) {
                                  return 1;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[35] < 12) {
                                  return 8;
                              } else {
                                  return 7;
                              }
                          }
                      }
                  } else {
                      if (features[35] < 4) {
                          if (features[51] < 2) {
                              if (features[61] < 3) {
                                  return 5;
                              } else {
                                  return 0;
                              }
                          } else {
                              if (features[50] < 9) {
                                  return 0;
                              } else {
                                  return 0;
                              }
                          }
                      } else {
                          if (features[36] < 10) {
                              if (features[11] < 9) {
                                  return 5;
                              } else {
                                  return 0;
                              }
                          } else {
                              if (features[11] < 15) {
                                  return 7;
                              } else {
                                  return 6;
                              }
                          }
                      }
                  }
              } else {
                  if (features[25] < 1) {
                      if (features[19] < 3) {
                          if (features[60] < 10) {
                              return 7;
                          } else {
                              if (features[6] < 2) {
                                  return 8;
                              } else {
                                  return 3;
                              }
                          }
                      } else {
                          if (features[34] < 13) {
                              if (features[50] < 0) {
                                  return 7;
                              } else {
                                  return 8;
                              }
                          } else {
                              if (features[10] < 3) {
                                  return 4;
                              } else {
                                  return 7;
                              }
                          }
                      }
                  } else {
                      if (features[36] < 1) {
                          return 0;
                      } else {
                          if (features[34] < 11) {
                              if (features[28] < 11) {
                                  return 8;
                              } else {
                                  return 9;
                              }
                          } else {
                              if (features[42] < 0) {
                                  return 4;
                              } else {
                                  return 4;
                              }
                          }
                      }
                  }
              }
          }
        }
        

int32_t mytree_predict(const int16_t *features, int32_t features_length) {

        int32_t votes[10] = {0,};
        int32_t _class = -1;

        _class = mytree_tree_0(features, features_length); votes[_class] += 1;
    _class = mytree_tree_1(features, features_length); votes[_class] += 1;
    _class = mytree_tree_2(features, features_length); votes[_class] += 1;
    _class = mytree_tree_3(features, features_length); votes[_class] += 1;
    _class = mytree_tree_4(features, features_length); votes[_class] += 1;
    _class = mytree_tree_5(features, features_length); votes[_class] += 1;
    _class = mytree_tree_6(features, features_length); votes[_class] += 1;
    _class = mytree_tree_7(features, features_length); votes[_class] += 1;
    _class = mytree_tree_8(features, features_length); votes[_class] += 1;
    _class = mytree_tree_9(features, features_length); votes[_class] += 1;
    
        int32_t most_voted_class = -1;
        int32_t most_voted_votes = 0;
        for (int32_t i=0; i<10; i++) {

            if (votes[i] > most_voted_votes) {
                most_voted_class = i;
                most_voted_votes = votes[i];
            }
        }
        return most_voted_class;
    }
    

int mytree_predict_proba(const int16_t *features, int32_t features_length, float *out, int out_length) {

        int32_t _class = -1;

        for (int i=0; i<out_length; i++) {
            out[i] = 0.0f;
        }

        _class = mytree_tree_0(features, features_length); out[_class] += 1.0f;
    _class = mytree_tree_1(features, features_length); out[_class] += 1.0f;
    _class = mytree_tree_2(features, features_length); out[_class] += 1.0f;
    _class = mytree_tree_3(features, features_length); out[_class] += 1.0f;
    _class = mytree_tree_4(features, features_length); out[_class] += 1.0f;
    _class = mytree_tree_5(features, features_length); out[_class] += 1.0f;
    _class = mytree_tree_6(features, features_length); out[_class] += 1.0f;
    _class = mytree_tree_7(features, features_length); out[_class] += 1.0f;
    _class = mytree_tree_8(features, features_length); out[_class] += 1.0f;
    _class = mytree_tree_9(features, features_length); out[_class] += 1.0f;
    
        // compute mean
        for (int i=0; i<out_length; i++) {
            out[i] = out[i] / 10;
        }
        return 0;
    }
    

            int32_t
            predict_wrapper(const float *values, int length) {
                // Convert to whatever is needed for inline
                int16_t features[64];
                for (int i=0; i<length; i++) {
                    features[i] = (int16_t)values[i];
                }
                const int32_t out = mytree_predict(features, length);
                if (out < 0) {
                    return -out;
                }
                return out;
            }

            int
            predict_proba_wrapper(const float *values, int length, float *outputs, int n_outputs) {
                // Convert to whatever is needed for inline
                int16_t features[64];
                for (int i=0; i<length; i++) {
                    features[i] = (int16_t)values[i];
                }

                const int err =                     mytree_predict_proba(features, length, outputs, n_outputs);

                return err;
            }
            