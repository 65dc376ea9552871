@0x80123185f2de198f;
# The JobGraph and what a TaskDeploymentDescriptor needs (filled by the Graphs issue).
