/*
 * The field numbers and values of Perfetto's trace format that the
 * Perfetto export writes, as Perfetto's .proto files give them
 * (protos/perfetto/trace/: trace.proto, trace_packet.proto,
 * track_event/track_event.proto, track_descriptor.proto,
 * process_descriptor.proto, thread_descriptor.proto,
 * counter_descriptor.proto, debug_annotation.proto,
 * interned_data/interned_data.proto, profiling/profile_common.proto).
 * A field's number is its wire identity: these never change.
 */
#ifndef ST_REPORT_PFPROTO_H
#define ST_REPORT_PFPROTO_H

enum {
	/* Trace */
	ST_PF_TRACE_PACKET = 1,
	/* TracePacket */
	ST_PF_PACKET_TIMESTAMP = 8,
	ST_PF_PACKET_SEQUENCE = 10, /* trusted_packet_sequence_id */
	ST_PF_PACKET_TRACK_EVENT = 11,
	ST_PF_PACKET_INTERNED = 12,
	ST_PF_PACKET_FLAGS = 13, /* sequence_flags: */
	ST_PF_SEQ_CLEARED = 1,	 /* SEQ_INCREMENTAL_STATE_CLEARED */
	ST_PF_SEQ_NEEDS = 2,	 /* SEQ_NEEDS_INCREMENTAL_STATE */
	ST_PF_PACKET_TRACK_DESCRIPTOR = 60,
	/* TrackDescriptor */
	ST_PF_TRACK_UUID = 1,
	ST_PF_TRACK_NAME = 2,
	ST_PF_TRACK_PROCESS = 3,
	ST_PF_TRACK_THREAD = 4,
	ST_PF_TRACK_PARENT = 5,
	ST_PF_TRACK_COUNTER = 8,
	/* ProcessDescriptor */
	ST_PF_PROCESS_PID = 1,
	ST_PF_PROCESS_NAME = 6,
	/* ThreadDescriptor */
	ST_PF_THREAD_PID = 1,
	ST_PF_THREAD_TID = 2,
	ST_PF_THREAD_NAME = 5,
	/* CounterDescriptor */
	ST_PF_COUNTER_UNIT = 3,
	ST_PF_UNIT_BYTES = 3, /* UNIT_SIZE_BYTES */
	/* TrackEvent */
	ST_PF_EVENT_CATEGORY = 3, /* category_iids */
	ST_PF_EVENT_ANNOTATION = 4,
	ST_PF_EVENT_TYPE = 9, /* type: */
	ST_PF_SLICE_BEGIN = 1,
	ST_PF_SLICE_END = 2,
	ST_PF_INSTANT = 3,
	ST_PF_COUNTER = 4,
	ST_PF_EVENT_NAME = 10, /* name_iid */
	ST_PF_EVENT_TRACK = 11,
	ST_PF_EVENT_COUNTER_VALUE = 30,
	ST_PF_EVENT_CALLSTACK = 56, /* callstack_iid */
	/* DebugAnnotation */
	ST_PF_ANN_NAME = 1, /* name_iid */
	ST_PF_ANN_UINT = 3,
	ST_PF_ANN_INT = 4,
	ST_PF_ANN_DOUBLE = 5,
	ST_PF_ANN_STRING = 6,
	ST_PF_ANN_POINTER = 7,
	ST_PF_ANN_STRING_IID = 17, /* string_value_iid */
	/* InternedData */
	ST_PF_IN_CATEGORIES = 1,
	ST_PF_IN_EVENT_NAMES = 2,
	ST_PF_IN_ANNOTATION_NAMES = 3,
	ST_PF_IN_FUNCTION_NAMES = 5,
	ST_PF_IN_FRAMES = 6,
	ST_PF_IN_CALLSTACKS = 7,
	ST_PF_IN_MAPPING_PATHS = 17,
	ST_PF_IN_SOURCE_PATHS = 18,
	ST_PF_IN_MAPPINGS = 19,
	ST_PF_IN_ANNOTATION_STRINGS = 29, /* debug_annotation_string_values */
	/* an entry of those: EventCategory, EventName, DebugAnnotationName,
	 * InternedString (whose str is field 2 too) */
	ST_PF_ENTRY_IID = 1,
	ST_PF_ENTRY_NAME = 2,
	/* Frame */
	ST_PF_FRAME_IID = 1,
	ST_PF_FRAME_FUNCTION = 2,
	ST_PF_FRAME_MAPPING = 3,
	ST_PF_FRAME_REL_PC = 4,
	ST_PF_FRAME_SOURCE = 5,
	ST_PF_FRAME_LINE = 6,
	/* Callstack */
	ST_PF_CALLSTACK_IID = 1,
	ST_PF_CALLSTACK_FRAMES = 2,
	/* Mapping */
	ST_PF_MAPPING_IID = 1,
	ST_PF_MAPPING_PATHS = 7, /* path_string_ids */
};

#endif
